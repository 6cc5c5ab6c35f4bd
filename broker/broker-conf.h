/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* /etc/sbx/broker.conf: optional; "key=value" lines, blank lines and "#" comments, white space around
 * keys and values ignored, the last value of a key winning. Keys:
 *
 *   ca_file=/path   a CA bundle (PEM) libcurl uses instead of its built-in bundle (CURLOPT_CAINFO); with
 *                   Debian's libcurl the CA directory /etc/ssl/certs (CURLOPT_CAPATH) stays trusted too,
 *                   so this adds the CAs of, say, an internal forge. An absolute path.
 *
 * An unknown key or a malformed line is an error: the broker does not start. */

#define BROKER_CONF_PATH "/etc/sbx/broker.conf"

typedef struct BrokerConf {
        char *ca_file; /* NULL: libcurl's default */
} BrokerConf;

void broker_conf_done(BrokerConf *c);

/* Parses the file's text. On failure *ret_line is the (1-based) line and *ret_error says what is wrong
 * with it; -EINVAL, or -ENOMEM. */
int broker_conf_parse(const char *text, BrokerConf *ret, unsigned *ret_line, char **ret_error);
