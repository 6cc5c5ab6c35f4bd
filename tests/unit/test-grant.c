/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* grant: broker grants, URL prefixes and requests, header filters, redaction, the peer's cgroup, the
 * grant file, the wire protocol and the operations log. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "grant.h"
#include "unit-test.h"

#define RUN "0123456789abcdef0123456789abcdef"
#define TENANT "fedcba9876543210fedcba9876543210"
#define CGROUP "/sbx.slice/sbx-dev.slice/sbx-dev-" RUN ".service"

static void test_names(void **state) {
        assert_true(grant_name_is_valid("gh"));
        assert_true(grant_name_is_valid("a0_-"));
        assert_true(grant_name_is_valid("abcdefghijklmnopqrstuvwxyz012345")); /* 32 */
        assert_false(grant_name_is_valid("abcdefghijklmnopqrstuvwxyz0123456")); /* 33 */
        assert_false(grant_name_is_valid(""));
        assert_false(grant_name_is_valid(NULL));
        assert_false(grant_name_is_valid("0gh"));
        assert_false(grant_name_is_valid("-gh"));
        assert_false(grant_name_is_valid("Gh"));
        assert_false(grant_name_is_valid("g.h"));
        assert_true(credential_name_is_valid("github_token-2"));
        assert_true(credential_name_is_valid("a123456789012345678901234567890123456789012345678901234567890123")); /* 64 */
        assert_false(credential_name_is_valid("a1234567890123456789012345678901234567890123456789012345678901234"));
        assert_false(credential_name_is_valid("a/b"));

        assert_int_equal(grant_method_from_string("GET"), GRANT_METHOD_GET);
        assert_int_equal(grant_method_from_string("DELETE"), GRANT_METHOD_DELETE);
        assert_int_equal(grant_method_from_string("get"), -EINVAL);
        assert_int_equal(grant_method_from_string("OPTIONS"), -EINVAL);
        assert_int_equal(grant_method_from_string(NULL), -EINVAL);
        assert_string_equal(grant_method_to_string(GRANT_METHOD_PATCH), "PATCH");
        assert_null(grant_method_to_string(_GRANT_METHOD_INVALID));
        for (GrantReason r = 0; r < _GRANT_REASON_MAX; r++)
                assert_int_equal(grant_reason_from_string(grant_reason_to_string(r)), r);
        assert_string_equal(grant_reason_to_string(GRANT_REASON_TOO_LARGE), "too-large");
        assert_string_equal(grant_reason_to_string(GRANT_REASON_NO_RUN), "no-run");

        assert_true(grant_secret_header_is_valid("Authorization"));
        assert_true(grant_secret_header_is_valid("X-Api-Key"));
        assert_false(grant_secret_header_is_valid("host"));
        assert_false(grant_secret_header_is_valid("Content-Length"));
        assert_false(grant_secret_header_is_valid("transfer-encoding"));
        assert_false(grant_secret_header_is_valid("Connection"));
        assert_false(grant_secret_header_is_valid("COOKIE"));
        assert_false(grant_secret_header_is_valid("X Key"));
        assert_false(grant_secret_header_is_valid("X:Key"));
        assert_false(grant_secret_header_is_valid(""));
        assert_true(grant_value_prefix_is_valid(""));
        assert_true(grant_value_prefix_is_valid("Bearer "));
        assert_true(grant_value_prefix_is_valid("token "));
        assert_false(grant_value_prefix_is_valid("Bearer\r\n"));
        assert_false(grant_value_prefix_is_valid("tab\t"));
        assert_false(grant_value_prefix_is_valid("caf\xc3\xa9"));
        assert_true(grant_value_prefix_is_valid("0123456789012345678901234567890123456789012345678901234567890123"));
        assert_false(grant_value_prefix_is_valid("01234567890123456789012345678901234567890123456789012345678901234"));
}

static void test_prefix_accepted(void **state) {
        static const struct {
                const char *in, *normalized, *host, *path;
                GrantScheme scheme;
                uint16_t port;
        } table[] = {
                { "https://git.example:8443/api/repos/acme/", "https://git.example:8443/api/repos/acme/",
                  "git.example", "/api/repos/acme/", GRANT_SCHEME_HTTPS, 8443 },
                { "https://Git.Example/api", "https://git.example/api", "git.example", "/api", GRANT_SCHEME_HTTPS, 443 },
                { "HTTPS://git.example:443/", "https://git.example/", "git.example", "/", GRANT_SCHEME_HTTPS, 443 },
                { "http://git.example/", "http://git.example/", "git.example", "/", GRANT_SCHEME_HTTP, 80 },
                { "http://git.example:443/", "http://git.example:443/", "git.example", "/", GRANT_SCHEME_HTTP, 443 },
                { "https://192.0.2.1/v1/", "https://192.0.2.1/v1/", "192.0.2.1", "/v1/", GRANT_SCHEME_HTTPS, 443 },
                { "https://0.0.0.0:1/", "https://0.0.0.0:1/", "0.0.0.0", "/", GRANT_SCHEME_HTTPS, 1 },
                { "https://[2001:DB8:0:0::1]:65535/x", "https://[2001:db8::1]:65535/x", "[2001:db8::1]", "/x",
                  GRANT_SCHEME_HTTPS, 65535 },
                { "https://[::1]/", "https://[::1]/", "[::1]", "/", GRANT_SCHEME_HTTPS, 443 },
                { "https://a-b.c9.example/p@x/:y/~z/a.b/a..b/", "https://a-b.c9.example/p@x/:y/~z/a.b/a..b/",
                  "a-b.c9.example", "/p@x/:y/~z/a.b/a..b/", GRANT_SCHEME_HTTPS, 443 },
                { "https://localhost/v1;x=1,2", "https://localhost/v1;x=1,2", "localhost", "/v1;x=1,2",
                  GRANT_SCHEME_HTTPS, 443 },
                { "https://1.example/", "https://1.example/", "1.example", "/", GRANT_SCHEME_HTTPS, 443 },
        };
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_free_ char *why = NULL, *s = NULL;
                GrantUrl u = {};
                int r = grant_url_prefix_parse(table[i].in, &u, &why);

                check_row(failures, r == 0, "'%s' -> %d %s", table[i].in, r, strna(why));
                if (r < 0)
                        continue;
                check_row(failures, grant_url_format(&u, &s) == 0 && streq(s, table[i].normalized), "'%s' -> '%s'",
                          table[i].in, strna(s));
                check_row(failures, streq(u.host, table[i].host) && streq(u.path, table[i].path) &&
                          u.scheme == table[i].scheme && u.port == table[i].port && !u.query,
                          "'%s': %s %s %u", table[i].in, u.host, u.path, u.port);
                grant_url_done(&u);
                /* the normalized form reads back as itself */
                r = grant_url_prefix_parse(table[i].normalized, &u, NULL);
                check_row(failures, r == 0 && streq(u.host, table[i].host) && u.port == table[i].port,
                          "'%s' again -> %d", table[i].normalized, r);
                grant_url_done(&u);
        }
        assert_int_equal(failures, 0);
}

static void test_prefix_refused(void **state) {
        static const struct {
                const char *in, *why;
        } table[] = {
                { "ftp://git.example/", "scheme must be https:// or http://" },
                { "git.example/api", "scheme must be https:// or http://" },
                { "https:/git.example/", "scheme must be https:// or http://" },
                { "https://git.example", "path must start with '/'" },
                { "https://git.example/api?x=1", "URL prefix has a query ('?')" },
                { "https://git.example/api#top", "URL has a fragment ('#')" },
                { "https://user@git.example/", "URL has a user name ('@')" },
                { "https://user:pw@git.example/", "URL has a user name ('@')" },
                { "https://git.example/a%2fb/", "path holds '%' (no percent-encoding in a prefix)" },
                { "https://git.example/a\\b/", "path holds a character not allowed there ('\\')" },
                { "https://git.example\\@evil.example/", "URL has a user name ('@')" },
                { "https://git.example//api/", "path holds an empty segment ('//')" },
                { "https://git.example/api//x/", "path holds an empty segment ('//')" },
                { "https://git.example/./api/", "path holds a '.' or '..' segment" },
                { "https://git.example/api/..", "path holds a '.' or '..' segment" },
                { "https://git.example/api/../x/", "path holds a '.' or '..' segment" },
                { "https://git.example/api/.", "path holds a '.' or '..' segment" },
                { "https://git.example/caf\xc3\xa9/", "URL holds a space, a control character or non-ASCII" },
                { "https://git.example/a b/", "URL holds a space, a control character or non-ASCII" },
                { "https://git.example/a\tb/", "URL holds a space, a control character or non-ASCII" },
                { "https://git.example/a\"b/", "path holds a character not allowed there ('\"')" },
                { "https://git.example/a{b}/", "path holds a character not allowed there ('{')" },
                { "https://git.example:0/", "port must be a number 1-65535 without leading zeros" },
                { "https://git.example:65536/", "port must be a number 1-65535 without leading zeros" },
                { "https://git.example:08443/", "port must be a number 1-65535 without leading zeros" },
                { "https://git.example:/", "port must be a number 1-65535 without leading zeros" },
                { "https://git.example:44a/", "port must be a number 1-65535 without leading zeros" },
                { "https:///api/", "no host" },
                { "https://:443/", "no host" },
                { "https://git.example./", "host name with an empty label" },
                { "https://git..example/", "host name with an empty label" },
                { "https://-git.example/", "host name label starting or ending with '-'" },
                { "https://git_x.example/", "host is not a DNS name, an IPv4 or a bracketed IPv6 literal" },
                { "https://git.example%00/", "host is not a DNS name, an IPv4 or a bracketed IPv6 literal" },
                { "https://192.0.2.256/", "malformed IPv4 literal (expected four numbers 0-255)" },
                { "https://192.0.2/", "malformed IPv4 literal (expected four numbers 0-255)" },
                { "https://192.0.2.01/", "malformed IPv4 literal (expected four numbers 0-255)" },
                { "https://2130706433/", "malformed IPv4 literal (expected four numbers 0-255)" },
                { "https://1.2.3.4.5/", "malformed IPv4 literal (expected four numbers 0-255)" },
                { "https://example.123/", "host name whose last label is a number" },
                { "https://0x7f.1/", "host name whose last label is a number" },
                { "https://example.0x1f/", "host name whose last label is a number" },
                { "https://[::1/", "malformed IPv6 literal" },
                { "https://[::g]/", "malformed IPv6 literal" },
                { "https://[]/", "malformed IPv6 literal" },
                { "https://[fe80::1%25eth0]/", "malformed IPv6 literal" },
                { "https://[::1]x/", "malformed IPv6 literal" },
                { "https://::1/", "no host" },
                { "", "scheme must be https:// or http://" },
        };
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_free_ char *why = NULL;
                GrantUrl u = {};
                int r = grant_url_prefix_parse(table[i].in, &u, &why);

                check_row(failures, r == -EINVAL && why && streq(why, table[i].why), "'%s' -> %d '%s'", table[i].in, r,
                          strna(why));
                if (r == 0)
                        grant_url_done(&u);
        }
        assert_int_equal(failures, 0);

        /* a label of 63 bytes, not 64; a name of 253 bytes, not 254 */
        {
                char host[300], url[400];
                GrantUrl u = {};

                memset(host, 'a', 63);
                strcpy(host + 63, ".example");
                snprintf(url, sizeof(url), "https://%s/", host);
                assert_int_equal(grant_url_prefix_parse(url, &u, NULL), 0);
                grant_url_done(&u);
                memset(host, 'a', 64);
                strcpy(host + 64, ".example");
                snprintf(url, sizeof(url), "https://%s/", host);
                assert_int_equal(grant_url_prefix_parse(url, &u, NULL), -EINVAL);

                for (size_t k = 0; k < 4; k++)
                        memset(host + k * 64, 'a', 63), host[k * 64 + 63] = '.';
                host[253] = 0; /* 4 * 64 - 3: the last label 61 bytes */
                snprintf(url, sizeof(url), "https://%s/", host);
                assert_int_equal(grant_url_prefix_parse(url, &u, NULL), 0);
                grant_url_done(&u);
                host[253] = 'a';
                host[254] = 0;
                snprintf(url, sizeof(url), "https://%s/", host);
                assert_int_equal(grant_url_prefix_parse(url, &u, NULL), -EINVAL);
        }
        /* too long */
        {
                _cleanup_free_ char *url = malloc(GRANT_URL_MAX + 2);
                GrantUrl u = {};

                assert_non_null(url);
                strcpy(url, "https://h.example/");
                memset(url + strlen(url), 'a', GRANT_URL_MAX + 1 - strlen(url));
                url[GRANT_URL_MAX + 1] = 0;
                assert_int_equal(grant_url_prefix_parse(url, &u, NULL), -EINVAL);
                url[GRANT_URL_MAX] = 0;
                assert_int_equal(grant_url_prefix_parse(url, &u, NULL), 0);
                grant_url_done(&u);
        }
}

static void grant_init(Grant *g, const char *prefix) {
        *g = (Grant) {
                .name = strdup("gh"),
                .credential = strdup("github"),
                .methods = 1u << GRANT_METHOD_GET | 1u << GRANT_METHOD_POST,
                .header = strdup("Authorization"),
                .value_prefix = strdup("Bearer "),
                .max_body = GRANT_MAX_BODY_DEFAULT,
        };
        assert_int_equal(grant_url_prefix_parse(prefix, &g->url_prefix, NULL), 0);
}

static void test_url_match(void **state) {
        static const struct {
                const char *prefix, *url;
                int r;
                const char *normalized; /* or the reason */
        } table[] = {
                { "https://git.example/api/repos/acme/", "https://git.example/api/repos/acme/x", 0,
                  "https://git.example/api/repos/acme/x" },
                { "https://git.example/api/repos/acme/", "https://git.example/api/repos/acme/", 0,
                  "https://git.example/api/repos/acme/" },
                { "https://git.example/api/repos/acme/", "https://git.example/api/repos/acme", -EPERM,
                  "the path is not below the grant's prefix (/api/repos/acme/)" },
                { "https://git.example/api/repos/acme/", "https://git.example/api/repos/acme/x/y?page=2&q=a%20b", 0,
                  "https://git.example/api/repos/acme/x/y?page=2&q=a%20b" },
                { "https://git.example/api/repos/acme/", "https://git.example/api/repos/acme/x?a=/b?c", 0,
                  "https://git.example/api/repos/acme/x?a=/b?c" },
                /* default port equivalence, host case */
                { "https://git.example/", "https://git.example:443/x", 0, "https://git.example/x" },
                { "https://git.example:443/", "https://GIT.Example/x", 0, "https://git.example/x" },
                { "http://git.example/", "http://git.example:80/", 0, "http://git.example/" },
                { "https://[2001:db8::1]/", "https://[2001:DB8:0::1]:443/v", 0, "https://[2001:db8::1]/v" },
                /* percent-encoding: unreserved decoded, others kept upper case */
                { "https://git.example/api/repos/acme/", "https://git.example/api/repos/ac%6De/x", 0,
                  "https://git.example/api/repos/acme/x" },
                { "https://git.example/api/", "https://git.example/api/a%20b%c3%a9", 0,
                  "https://git.example/api/a%20b%C3%A9" },
                /* prefix boundaries */
                { "https://git.example/api/a", "https://git.example/api/a", 0, "https://git.example/api/a" },
                { "https://git.example/api/a", "https://git.example/api/a/b", 0, "https://git.example/api/a/b" },
                { "https://git.example/api/a", "https://git.example/api/a?x", 0, "https://git.example/api/a?x" },
                { "https://git.example/api/a", "https://git.example/api/ab", -EPERM,
                  "the path is not below the grant's prefix (/api/a)" },
                { "https://git.example/api/a", "https://git.example/api/", -EPERM,
                  "the path is not below the grant's prefix (/api/a)" },
                { "https://git.example/api/a/", "https://git.example/api/ab", -EPERM,
                  "the path is not below the grant's prefix (/api/a/)" },
                { "https://git.example/", "https://git.example/anything", 0, "https://git.example/anything" },
                /* escaping the prefix */
                { "https://git.example/api/repos/acme/", "https://git.example/api/repos/acme/../other/x", -EINVAL,
                  "path holds a '.' or '..' segment" },
                { "https://git.example/api/repos/acme/", "https://git.example/api/repos/acme/%2e%2e/other/x", -EINVAL,
                  "path holds an encoded '/', '.', '\\', '%' or control character" },
                { "https://git.example/api/repos/acme/", "https://git.example/api/repos/acme/%2E%2E/other/x", -EINVAL,
                  "path holds an encoded '/', '.', '\\', '%' or control character" },
                { "https://git.example/api/repos/acme/", "https://git.example/api/repos/acme/.%2e/other", -EINVAL,
                  "path holds an encoded '/', '.', '\\', '%' or control character" },
                { "https://git.example/api/repos/acme", "https://git.example/api/repos/acme%2Fother", -EINVAL,
                  "path holds an encoded '/', '.', '\\', '%' or control character" },
                { "https://git.example/api/repos/acme", "https://git.example/api/repos/acme%2fother", -EINVAL,
                  "path holds an encoded '/', '.', '\\', '%' or control character" },
                { "https://git.example/api/", "https://git.example/api/a%5Cb", -EINVAL,
                  "path holds an encoded '/', '.', '\\', '%' or control character" },
                { "https://git.example/api/", "https://git.example/api/a%5cb", -EINVAL,
                  "path holds an encoded '/', '.', '\\', '%' or control character" },
                { "https://git.example/api/", "https://git.example/api/a%00", -EINVAL,
                  "path holds an encoded '/', '.', '\\', '%' or control character" },
                { "https://git.example/api/", "https://git.example/api/a%252e%252e/", -EINVAL,
                  "path holds an encoded '/', '.', '\\', '%' or control character" },
                { "https://git.example/api/", "https://git.example/api/a%0a", -EINVAL,
                  "path holds an encoded '/', '.', '\\', '%' or control character" },
                { "https://git.example/api/", "https://git.example/api/a%zz", -EINVAL,
                  "path holds a malformed percent-encoding" },
                { "https://git.example/api/", "https://git.example/api/a%2", -EINVAL,
                  "path holds a malformed percent-encoding" },
                { "https://git.example/api/", "https://git.example/api/x?a=%00", -EINVAL,
                  "query holds an encoded NUL (%00)" },
                { "https://git.example/api/", "https://git.example/api/x?a=%g1", -EINVAL,
                  "query holds a malformed percent-encoding" },
                { "https://git.example/api/", "https://git.example/api/x?a=b c", -EINVAL,
                  "URL holds a space, a control character or non-ASCII" },
                { "https://git.example/api/", "https://git.example/api/a\\..\\b", -EINVAL,
                  "path holds a character not allowed there ('\\')" },
                { "https://git.example/api/", "https://git.example/api//x", -EINVAL,
                  "path holds an empty segment ('//')" },
                { "https://git.example/api/", "https://a@git.example/api/x", -EINVAL, "URL has a user name ('@')" },
                { "https://git.example/api/", "https://git.example@evil.example/api/x", -EINVAL,
                  "URL has a user name ('@')" },
                { "https://git.example/api/", "https://git.example/api/x#frag", -EINVAL, "URL has a fragment ('#')" },
                { "https://git.example/api/", "https://git.example/api/x?y#frag", -EINVAL, "URL has a fragment ('#')" },
                /* somewhere else */
                { "https://git.example/api/", "https://evil.example/api/x", -EPERM,
                  "the host is not the grant's (git.example)" },
                { "https://git.example/api/", "https://git.example.evil.example/api/x", -EPERM,
                  "the host is not the grant's (git.example)" },
                { "https://git.example/api/", "https://git.example:8443/api/x", -EPERM,
                  "the port is not the grant's (443)" },
                { "https://git.example:8443/api/", "https://git.example/api/x", -EPERM,
                  "the port is not the grant's (8443)" },
                { "https://git.example/api/", "http://git.example/api/x", -EPERM, "the scheme is not the grant's (https)" },
                { "http://git.example/api/", "http://git.example:443/api/x", -EPERM, "the port is not the grant's (80)" },
                { "https://192.0.2.1/api/", "https://192.0.2.01/api/x", -EINVAL,
                  "malformed IPv4 literal (expected four numbers 0-255)" },
                { "https://git.example/api/", "https://git.example/API/x", -EPERM,
                  "the path is not below the grant's prefix (/api/)" },
                { "https://git.example/api/", "https://git.example", -EINVAL, "path must start with '/'" },
                { "https://git.example/api/", "https://git.example?x", -EINVAL, "path must start with '/'" },
        };
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_free_ char *why = NULL, *s = NULL;
                GrantUrl u = {};
                Grant g;
                int r;

                grant_init(&g, table[i].prefix);
                r = grant_url_match(&g, table[i].url, &u, &why);
                if (table[i].r == 0) {
                        check_row(failures, r == 0, "'%s' under '%s' -> %d %s", table[i].url, table[i].prefix, r,
                                  strna(why));
                        if (r == 0)
                                check_row(failures, grant_url_format(&u, &s) == 0 && streq(s, table[i].normalized),
                                          "'%s' -> '%s'", table[i].url, strna(s));
                } else
                        check_row(failures, r == table[i].r && why && streq(why, table[i].normalized),
                                  "'%s' under '%s' -> %d '%s'", table[i].url, table[i].prefix, r, strna(why));
                grant_url_done(&u);
                grant_done(&g);
        }
        assert_int_equal(failures, 0);

        assert_true(grant_path_covered("/", "/"));
        assert_true(grant_path_covered("/", "/x"));
        assert_true(grant_path_covered("/a/b", "/a/b/c"));
        assert_false(grant_path_covered("/a/b", "/a/bc"));
        assert_false(grant_path_covered("/a/b/", "/a/b"));
        assert_false(grant_path_covered("", "/a"));
}

static void test_request_headers(void **state) {
        Grant g;

        grant_init(&g, "https://git.example/");
        free(g.header);
        g.header = strdup("X-Api-Key");
        assert_true(grant_request_header_allowed(&g, "Accept", "application/json"));
        assert_true(grant_request_header_allowed(&g, "Content-Type", "text/plain; charset=utf-8"));
        assert_true(grant_request_header_allowed(&g, "X-Empty", ""));
        assert_true(grant_request_header_allowed(&g, "If-None-Match", "\"abc\"\t"));
        assert_false(grant_request_header_allowed(&g, "x-api-key", "mine"));
        assert_false(grant_request_header_allowed(&g, "X-API-KEY", "mine"));
        assert_false(grant_request_header_allowed(&g, "Host", "evil.example"));
        assert_false(grant_request_header_allowed(&g, "authorization", "Bearer x"));
        assert_false(grant_request_header_allowed(&g, "Proxy-Authorization", "x"));
        assert_false(grant_request_header_allowed(&g, "proxy-connection", "x"));
        assert_false(grant_request_header_allowed(&g, "Cookie", "a=b"));
        assert_false(grant_request_header_allowed(&g, "Content-Length", "3"));
        assert_false(grant_request_header_allowed(&g, "Transfer-Encoding", "chunked"));
        assert_false(grant_request_header_allowed(&g, "Connection", "close"));
        assert_false(grant_request_header_allowed(&g, "Expect", "100-continue"));
        assert_false(grant_request_header_allowed(&g, "Accept-Encoding", "gzip"));
        assert_false(grant_request_header_allowed(&g, "Range", "bytes=0-3"));
        assert_false(grant_request_header_allowed(&g, "X Y", "v"));
        assert_false(grant_request_header_allowed(&g, "X:Y", "v"));
        assert_false(grant_request_header_allowed(&g, "", "v"));
        assert_false(grant_request_header_allowed(&g, "X-Y", "a\r\nHost: evil"));
        assert_false(grant_request_header_allowed(&g, "X-Y", "a\nb"));
        assert_false(grant_request_header_allowed(&g, "X-Y", "caf\xc3\xa9"));
        assert_false(grant_request_header_allowed(&g, "X-Y", NULL));
        /* the default header */
        free(g.header);
        g.header = strdup("Authorization");
        assert_true(grant_request_header_allowed(&g, "X-Api-Key", "mine"));
        grant_done(&g);
}

static void test_response_headers(void **state) {
        static const char secret[] = "s3cr3t-t0ken";
        const size_t n = strlen(secret);

        assert_true(grant_response_header_kept("Content-Type", "application/json", secret, n));
        assert_true(grant_response_header_kept("Location", "https://git.example/api/x", secret, n));
        assert_true(grant_response_header_kept("WWW-Authenticate", "Bearer realm=\"x\"", secret, n));
        assert_true(grant_response_header_kept("X-Empty", "", secret, n));
        assert_false(grant_response_header_kept("Set-Cookie", "a=b", secret, n));
        assert_false(grant_response_header_kept("set-cookie2", "a=b", secret, n));
        assert_false(grant_response_header_kept("Authorization", "x", secret, n));
        assert_false(grant_response_header_kept("Proxy-Authorization", "x", secret, n));
        assert_false(grant_response_header_kept("Proxy-Authenticate", "x", secret, n));
        assert_false(grant_response_header_kept("Transfer-Encoding", "chunked", secret, n));
        assert_false(grant_response_header_kept("Connection", "keep-alive", secret, n));
        assert_false(grant_response_header_kept("X-Echo", "Bearer s3cr3t-t0ken", secret, n));
        assert_false(grant_response_header_kept("Location", "https://git.example/?t=s3cr3t-t0ken&x", secret, n));
        assert_false(grant_response_header_kept("X-s3cr3t-t0ken", "x", secret, n));
        assert_true(grant_response_header_kept("X-Echo", "Bearer s3cr3t-t0ke", secret, n));
        assert_true(grant_response_header_kept("X-Echo", "Bearer s3cr3t-t0ken", secret, 0));
        assert_false(grant_response_header_kept("X-Bad", "a\rb", secret, n));
        assert_false(grant_response_header_kept("X-Bad", "caf\xc3\xa9", secret, n));
        assert_false(grant_response_header_kept("Bad Name", "x", secret, n));
}

static void test_redact(void **state) {
        static const struct {
                const char *in, *secret, *out;
                int count;
        } table[] = {
                { "token=abc123;", "abc123", "token=******;", 1 },
                { "abc123", "abc123", "******", 1 },
                { "abc123abc123", "abc123", "************", 2 },
                { "xabc12", "abc123", "xabc12", 0 },      /* cut short at the end */
                { "abc12 3", "abc123", "abc12 3", 0 },   /* split by another byte: not the secret */
                { "ABC123", "abc123", "ABC123", 0 },
                { "aaaa", "aa", "****", 3 },             /* overlapping */
                { "abababa", "aba", "*******", 3 },
                { "xabababy", "abab", "x******y", 2 },
                { "aabaabaaab", "aabaa", "********ab", 2 },
                { "aaab", "aab", "a***", 1 },             /* a partial match restarts */
                { "", "abc", "", 0 },
                { "ab", "abc", "ab", 0 },
                { "x", "x", "*", 1 },
        };
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                char buf[64];
                size_t n = strlen(table[i].in);
                int r;

                memcpy(buf, table[i].in, n + 1);
                r = grant_redact(buf, n, table[i].secret, strlen(table[i].secret));
                check_row(failures, r == table[i].count && streq(buf, table[i].out), "'%s' - '%s' -> %d '%s'",
                          table[i].in, table[i].secret, r, buf);
        }
        assert_int_equal(failures, 0);

        /* binary: NUL bytes in the body, the length given, nothing past it touched */
        {
                char buf[] = { 'k', 0, 'e', 'y', 'k', 0, 'e', 'y', 'k', 0 };

                assert_int_equal(grant_redact(buf, 8, "k\0ey", 4), 2);
                assert_memory_equal(buf, "********k\0", 10);
                assert_int_equal(grant_redact(buf, 10, "", 0), 0);
        }
        /* large: linear, every occurrence */
        {
                size_t n = 1 << 20;
                _cleanup_free_ char *big = malloc(n);

                assert_non_null(big);
                memset(big, 'a', n);
                assert_int_equal(grant_redact(big, n, "aaaaaaaaaaaaaaab", 16), 0);
                big[n - 1] = 'b';
                assert_int_equal(grant_redact(big, n, "aaaaaaaaaaaaaaab", 16), 1);
                for (size_t i = n - 16; i < n; i++)
                        assert_int_equal(big[i], '*');
                assert_int_equal(big[n - 17], 'a');
        }
}

static void test_cgroup(void **state) {
        char id[RUN_ID_LEN + 1];
        _cleanup_free_ char *p = NULL;

        assert_true(grant_cgroup_matches("0::" CGROUP "\n", CGROUP));
        assert_true(grant_cgroup_matches("0::" CGROUP, CGROUP));
        assert_true(grant_cgroup_matches("0::" CGROUP "/payload\n", CGROUP));
        assert_false(grant_cgroup_matches("0::" CGROUP "2\n", CGROUP));           /* a sibling */
        assert_false(grant_cgroup_matches("0::" CGROUP "x/y\n", CGROUP));
        assert_false(grant_cgroup_matches("0::/sbx.slice/sbx-dev.slice\n", CGROUP)); /* the parent */
        assert_false(grant_cgroup_matches("0::" CGROUP "/../other.service\n", CGROUP));
        assert_false(grant_cgroup_matches("0::" CGROUP "/..\n", CGROUP));
        assert_false(grant_cgroup_matches("0::" CGROUP "/./x\n", CGROUP));
        assert_false(grant_cgroup_matches("0::" CGROUP "//x\n", CGROUP));
        assert_false(grant_cgroup_matches("0::" CGROUP " (deleted)\n", CGROUP));
        assert_false(grant_cgroup_matches("1::" CGROUP "\n", CGROUP));
        assert_false(grant_cgroup_matches("0:" CGROUP "\n", CGROUP));
        assert_false(grant_cgroup_matches(CGROUP "\n", CGROUP));
        assert_false(grant_cgroup_matches("12:pids:/x\n0::" CGROUP "\n", CGROUP)); /* hybrid */
        assert_false(grant_cgroup_matches("0::" CGROUP "\n1:name=systemd:/\n", CGROUP));
        assert_false(grant_cgroup_matches("0::" CGROUP "\n\n", CGROUP));
        assert_false(grant_cgroup_matches("", CGROUP));
        assert_false(grant_cgroup_matches(NULL, CGROUP));
        assert_false(grant_cgroup_matches("0::/\n", "/"));
        assert_false(grant_cgroup_matches("0::" CGROUP "/x\n", CGROUP "/"));
        assert_false(grant_cgroup_matches("0::" CGROUP "\n", NULL));

        assert_int_equal(grant_cgroup_from_proc("0::/a/b\n", &p), 0);
        assert_string_equal(p, "/a/b");

        /* the unified hierarchy's line beside v1 hierarchies (a unified host inside a hybrid one) */
        assert_string_equal(grant_cgroup_unified_line("0::" CGROUP "\n"), "0::" CGROUP "\n");
        assert_string_equal(grant_cgroup_unified_line("0::" CGROUP), "0::" CGROUP);
        assert_string_equal(grant_cgroup_unified_line("12:pids:/x\n1:name=systemd:/../..\n0::" CGROUP "\n"),
                            "0::" CGROUP "\n");
        assert_true(grant_cgroup_matches(grant_cgroup_unified_line("9:name=systemd:/\n1:cpu:/a:b\n0::" CGROUP "\n"),
                                         CGROUP));
        assert_null(grant_cgroup_unified_line("12:pids:/x\n"));                   /* no unified line */
        assert_null(grant_cgroup_unified_line("0::/other\n0::" CGROUP "\n"));      /* two */
        assert_null(grant_cgroup_unified_line("0::/a/x\n0::" CGROUP "\n"));        /* a path with a newline */
        assert_null(grant_cgroup_unified_line("1:cpu:/\n0::/a/x\n5:cpu:/\n"));    /* the unified one not last */
        assert_null(grant_cgroup_unified_line("01:cpu:/\n0::" CGROUP "\n"));
        assert_null(grant_cgroup_unified_line("x:cpu:/\n0::" CGROUP "\n"));
        assert_null(grant_cgroup_unified_line("12pids:/x\n0::" CGROUP "\n"));
        assert_null(grant_cgroup_unified_line("\n0::" CGROUP "\n"));
        assert_null(grant_cgroup_unified_line("12:pids:/x\n0:" CGROUP "\n"));
        assert_null(grant_cgroup_unified_line(""));
        assert_null(grant_cgroup_unified_line(NULL));
        /* what it returns still meets grant_cgroup_from_proc()'s checks */
        assert_false(grant_cgroup_matches(grant_cgroup_unified_line("1:cpu:/\n0::" CGROUP " (deleted)\n"), CGROUP));

        assert_int_equal(grant_cgroup_run_id(CGROUP, id), 0);
        assert_string_equal(id, RUN);
        assert_int_equal(grant_cgroup_run_id(CGROUP "/payload", id), 0);
        assert_string_equal(id, RUN);
        assert_int_equal(grant_cgroup_run_id("/sbx.slice/sbx-my_prof2.slice/sbx-my_prof2-" RUN ".service", id), 0);
        assert_int_equal(grant_cgroup_run_id(CGROUP "2", id), -EINVAL);
        assert_int_equal(grant_cgroup_run_id("/sbx.slice/sbx-dev.slice/sbx-other-" RUN ".service", id), -EINVAL);
        assert_int_equal(grant_cgroup_run_id("/sbx.slice/sbx-dev.slice/sbx-dev-" RUN ".scope", id), -EINVAL);
        assert_int_equal(grant_cgroup_run_id("/sbx.slice/sbx-dev.slice/sbx-dev-0123.service", id), -EINVAL);
        assert_int_equal(grant_cgroup_run_id("/sbx.slice/sbx-dev.slice/sbx-dev-" RUN "0.service", id), -EINVAL);
        assert_int_equal(grant_cgroup_run_id("/sbx.slice/sbx-Dev.slice/sbx-Dev-" RUN ".service", id), -EINVAL);
        assert_int_equal(grant_cgroup_run_id("/sbx.slice/sbx-.slice/sbx--" RUN ".service", id), -EINVAL);
        assert_int_equal(grant_cgroup_run_id("/sbx.slice/sbx-net@" RUN ".service", id), -EINVAL);
        assert_int_equal(grant_cgroup_run_id("/user.slice/sbx-dev.slice/sbx-dev-" RUN ".service", id), -EINVAL);
        assert_int_equal(grant_cgroup_run_id("/sbx.slice/sbx-dev.slice/sbx-dev-0123456789ABCDEF0123456789abcdef.service",
                                             id), -EINVAL);
        assert_int_equal(grant_cgroup_run_id("/sbx.slice/sbx-dev.slice", id), -EINVAL);
}

#define GRANT_JSON(extra)                                                                                      \
        "{\"credential\":\"github\",\"methods\":[\"GET\",\"POST\"],"                                            \
        "\"url_prefix\":\"https://Git.Example:443/api/repos/acme/\",\"header\":\"Authorization\","              \
        "\"value_prefix\":\"Bearer \",\"max_body\":1048576" extra "}"

static void test_grant_file(void **state) {
        static const char text[] = "{\"run\":\"" RUN "\",\"tenant\":\"" TENANT "\",\"cgroup\":\"" CGROUP "\","
                                   "\"grants\":{\"gh\":" GRANT_JSON("") ",\"other\":" GRANT_JSON("") "}}";
        _cleanup_(grant_file_freep) GrantFile *f = NULL;
        _cleanup_free_ char *err = NULL;
        const Grant *g;

        assert_int_equal(grant_file_parse(text, strlen(text), "x.json", &f, &err), 0);
        assert_string_equal(f->run, RUN);
        assert_string_equal(f->tenant, TENANT);
        assert_string_equal(f->cgroup, CGROUP);
        assert_int_equal(f->n_grants, 2);
        g = grant_file_find(f, "gh");
        assert_non_null(g);
        assert_string_equal(g->name, "gh");
        assert_string_equal(g->credential, "github");
        assert_int_equal(g->methods, 1u << GRANT_METHOD_GET | 1u << GRANT_METHOD_POST);
        assert_true(grant_allows_method(g, GRANT_METHOD_POST));
        assert_false(grant_allows_method(g, GRANT_METHOD_DELETE));
        assert_false(grant_allows_method(g, _GRANT_METHOD_INVALID));
        assert_string_equal(g->url_prefix.host, "git.example");
        assert_int_equal(g->url_prefix.port, 443);
        assert_string_equal(g->url_prefix.path, "/api/repos/acme/");
        assert_string_equal(g->header, "Authorization");
        assert_string_equal(g->value_prefix, "Bearer ");
        assert_int_equal(g->max_body, 1048576);
        assert_non_null(grant_file_find(f, "other"));
        assert_null(grant_file_find(f, "none"));
        assert_null(grant_file_find(f, NULL));
}

static void test_grant_file_refused(void **state) {
        static const struct {
                const char *text, *error;
        } table[] = {
                { "{", "f.json:1:2: unexpected end of data" },
                { "[]", "f.json: expected an object, got []" },
                { "{\"run\":\"" RUN "\",\"tenant\":\"" TENANT "\",\"cgroup\":\"" CGROUP "\"}", "f.json: grants: missing required key" },
                { "{\"run\":\"xyz\",\"tenant\":\"" TENANT "\",\"cgroup\":\"" CGROUP "\",\"grants\":{}}",
                  "f.json: run: expected a run id (32 lower-case hex digits), got \"xyz\"" },
                { "{\"run\":\"" RUN "\",\"tenant\":\"ABC\",\"cgroup\":\"" CGROUP "\",\"grants\":{}}",
                  "f.json: tenant: expected a tenant id (32 lower-case hex digits), got \"ABC\"" },
                { "{\"run\":\"" RUN "\",\"tenant\":\"" TENANT "\",\"cgroup\":\"/sbx.slice/sbx-dev.slice/sbx-dev-"
                  "ffffffffffffffffffffffffffffffff.service\",\"grants\":{}}",
                  "f.json: cgroup: expected the cgroup of run " RUN ", got \"/sbx.slice/sbx-dev.slice/sbx-dev-fffffffffffffffffffffffffffffff...\"" },
                { "{\"run\":\"" RUN "\",\"tenant\":\"" TENANT "\",\"cgroup\":\"/\",\"grants\":{}}",
                  "f.json: cgroup: expected a run's cgroup (/sbx.slice/sbx-PROFILE.slice/sbx-PROFILE-RUNID.service), got \"/\"" },
                { "{\"run\":\"" RUN "\",\"tenant\":\"" TENANT "\",\"cgroup\":\"" CGROUP "\",\"grants\":{},\"x\":1}",
                  "f.json: x: unknown key" },
                { "{\"run\":\"" RUN "\",\"tenant\":\"" TENANT "\",\"cgroup\":\"" CGROUP "\",\"grants\":{\"Gh\":" GRANT_JSON("") "}}",
                  "f.json: grants.Gh: invalid grant name: expected [a-z][a-z0-9_-]{0,31}" },
                { "{\"run\":\"" RUN "\",\"tenant\":\"" TENANT "\",\"cgroup\":\"" CGROUP "\",\"grants\":{\"gh\":"
                  "{\"credential\":\"github\"}}}",
                  "f.json: grants.gh.methods: missing required key" },
                { "{\"run\":\"" RUN "\",\"tenant\":\"" TENANT "\",\"cgroup\":\"" CGROUP "\",\"grants\":{\"gh\":" GRANT_JSON(",\"y\":2") "}}",
                  "f.json: grants.gh.y: unknown key" },
        };
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                GrantFile *f = NULL;
                char *err = NULL;
                int r = grant_file_parse(table[i].text, strlen(table[i].text), "f.json", &f, &err);

                check_row(failures, r == -EINVAL && err && streq(err, table[i].error), "row %zu: %d %s", i, r, strna(err));
                grant_file_free(f);
                free(err);
        }
        assert_int_equal(failures, 0);
}

static void test_grant_from_json(void **state) {
        static const struct {
                const char *json, *error;
        } table[] = {
                { GRANT_JSON(""), NULL },
                { "{\"credential\":\"Github\",\"methods\":[\"GET\"],\"url_prefix\":\"https://h.example/\","
                  "\"header\":\"Authorization\",\"value_prefix\":\"\",\"max_body\":1}",
                  "grants: gh.credential: expected a credential name ([a-z][a-z0-9_-]{0,63}), got \"Github\"" },
                { "{\"credential\":\"github\",\"methods\":[],\"url_prefix\":\"https://h.example/\","
                  "\"header\":\"Authorization\",\"value_prefix\":\"\",\"max_body\":1}",
                  "grants: gh.methods: expected at least one method" },
                { "{\"credential\":\"github\",\"methods\":[\"GET\",\"get\"],\"url_prefix\":\"https://h.example/\","
                  "\"header\":\"Authorization\",\"value_prefix\":\"\",\"max_body\":1}",
                  "grants: gh.methods[1]: expected one of GET, HEAD, POST, PUT, PATCH, DELETE, got \"get\"" },
                { "{\"credential\":\"github\",\"methods\":[\"GET\",\"GET\"],\"url_prefix\":\"https://h.example/\","
                  "\"header\":\"Authorization\",\"value_prefix\":\"\",\"max_body\":1}",
                  "grants: gh.methods[1]: 'GET' is given twice" },
                { "{\"credential\":\"github\",\"methods\":[\"GET\"],\"url_prefix\":\"https://h.example/?x\","
                  "\"header\":\"Authorization\",\"value_prefix\":\"\",\"max_body\":1}",
                  "grants: gh.url_prefix: expected an http(s) URL prefix: URL prefix has a query ('?'), got \"https://h.example/?x\"" },
                { "{\"credential\":\"github\",\"methods\":[\"GET\"],\"url_prefix\":\"https://h.example/\","
                  "\"header\":\"Host\",\"value_prefix\":\"\",\"max_body\":1}",
                  "grants: gh.header: expected a header name (not Host, Cookie, Connection, Content-Length or "
                  "Transfer-Encoding), got \"Host\"" },
                { "{\"credential\":\"github\",\"methods\":[\"GET\"],\"url_prefix\":\"https://h.example/\","
                  "\"header\":\"Authorization\",\"value_prefix\":\"a\\nb\",\"max_body\":1}",
                  "grants: gh.value_prefix: expected at most 64 printable ASCII characters, got \"a\\nb\"" },
                { "{\"credential\":\"github\",\"methods\":[\"GET\"],\"url_prefix\":\"https://h.example/\","
                  "\"header\":\"Authorization\",\"value_prefix\":\"\",\"max_body\":67108865}",
                  "grants: gh.max_body: expected 1 byte to 64M, got 67108865" },
                { "{\"credential\":\"github\",\"methods\":[\"GET\"],\"url_prefix\":\"https://h.example/\","
                  "\"header\":\"Authorization\",\"value_prefix\":\"\",\"max_body\":0}",
                  "grants: gh.max_body: expected 1 byte to 64M, got 0" },
                { "{\"credential\":\"github\",\"methods\":[\"GET\"],\"url_prefix\":\"https://h.example/\","
                  "\"header\":\"Authorization\",\"value_prefix\":\"\"}",
                  "grants: gh.max_body: missing required key" },
        };
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                json_object *o = json_tokener_parse(table[i].json);
                char *err = NULL;
                Grant g = {};
                int r;

                assert_non_null(o);
                r = grant_from_json(o, "gh", &g, &err);
                if (!table[i].error)
                        check_row(failures, r == 0 && streq(g.name, "gh"), "row %zu: %d %s", i, r, strna(err));
                else
                        check_row(failures, r == -EINVAL && err && streq(err, table[i].error), "row %zu: %d %s", i,
                                  r, strna(err));
                grant_done(&g);
                free(err);
                json_object_put(o);
        }
        assert_int_equal(failures, 0);
}

static void test_request_parse(void **state) {
        static const char line[] = "{\"grant\":\"gh\",\"method\":\"POST\",\"url\":\"https://git.example/api/x?y=1\","
                                   "\"headers\":{\"Accept\":\"application/json\",\"X-Empty\":\"\"},\"body_bytes\":12}";
        static const struct {
                const char *line, *error;
        } refused[] = {
                { "{\"method\":\"GET\",\"url\":\"https://h/\"}", "request: grant: missing required key" },
                { "{\"grant\":1,\"method\":\"GET\",\"url\":\"https://h/\"}", "request: grant: expected a string, got 1" },
                { "{\"grant\":\"gh\",\"method\":\"GET\",\"url\":\"https://h/\",\"run\":\"x\"}", "request: run: unknown key" },
                { "{\"grant\":\"gh\",\"method\":\"GET\",\"url\":\"https://h/\",\"headers\":{\"A\":1}}",
                  "request: headers.A: expected a string, got 1" },
                { "{\"grant\":\"gh\",\"method\":\"GET\",\"url\":\"https://h/\",\"headers\":[]}",
                  "request: headers: expected an object of header values by name, got []" },
                { "{\"grant\":\"gh\",\"method\":\"GET\",\"url\":\"https://h/\",\"body_bytes\":-1}",
                  "request: body_bytes: expected an integer >= 0, got -1" },
                { "{\"grant\":\"gh\",\"method\":\"GET\",\"url\":\"https://h/\",\"body_bytes\":\"1\"}",
                  "request: body_bytes: expected an integer >= 0, got \"1\"" },
                { "{\"grant\":\"gh\"", "request:1:14: unexpected end of data" },
                { "{\"grant\":\"gh\"} x", "request:1:16: trailing characters after the JSON document" },
        };
        GrantRequest req = {};
        unsigned failures = 0;
        char *err = NULL;

        assert_int_equal(grant_request_parse(line, strlen(line), &req, &err), 0);
        assert_string_equal(req.grant, "gh");
        assert_string_equal(req.method, "POST");
        assert_string_equal(req.url, "https://git.example/api/x?y=1");
        assert_int_equal(req.body_bytes, 12);
        assert_int_equal(strv_length(req.headers), 4);
        assert_string_equal(req.headers[0], "Accept");
        assert_string_equal(req.headers[1], "application/json");
        assert_string_equal(req.headers[2], "X-Empty");
        assert_string_equal(req.headers[3], "");
        grant_request_done(&req);

        {
                static const char minimal[] = "{\"grant\":\"gh\",\"method\":\"GET\",\"url\":\"u\"}";

                assert_int_equal(grant_request_parse(minimal, strlen(minimal), &req, NULL), 0);
        }
        assert_null(req.headers);
        assert_int_equal(req.body_bytes, 0);
        grant_request_done(&req);

        for (size_t i = 0; i < ELEMENTSOF(refused); i++) {
                int r = grant_request_parse(refused[i].line, strlen(refused[i].line), &req, &err);

                check_row(failures, r == -EINVAL && err && streq(err, refused[i].error), "row %zu: %d %s", i, r,
                          strna(err));
                free(err);
                err = NULL;
        }
        assert_int_equal(failures, 0);
}

static void test_replies(void **state) {
        _cleanup_free_ char *s = NULL, *e = NULL;
        size_t n;

        assert_int_equal(grant_reply_format(200, (char *[]) { (char *) "Content-Type", (char *) "text/plain",
                                                              (char *) "X-A", (char *) "a\"b", NULL }, 5, &s, &n), 0);
        assert_string_equal(s, "{\"status\":200,\"headers\":[[\"Content-Type\",\"text/plain\"],[\"X-A\",\"a\\\"b\"]],"
                               "\"body_bytes\":5}\n");
        assert_int_equal(n, strlen(s));
        free(s);
        assert_int_equal(grant_reply_format(304, NULL, 0, &s, NULL), 0);
        assert_string_equal(s, "{\"status\":304,\"headers\":[],\"body_bytes\":0}\n");

        assert_int_equal(grant_error_format(GRANT_REASON_URL, "the host is not the grant's (git.example)", &e, &n), 0);
        assert_string_equal(e, "{\"error\":\"the host is not the grant's (git.example)\",\"reason\":\"url\"}\n");
        assert_int_equal(grant_error_format(_GRANT_REASON_INVALID, "x", &e, &n), -EINVAL);
}

static json_object *member(json_object *o, const char *key) {
        json_object *v = NULL;

        assert_true(json_object_object_get_ex(o, key, &v));
        return v;
}

static void test_op_format(void **state) {
        GrantOp op = {
                .id = 0x00ab0000cd0000efULL,
                .grant = "gh",
                .method = GRANT_METHOD_POST,
                .host = "git.example",
                .port = 443,
                .path_prefix = "/api/repos/acme/",
                .verdict = GRANT_VERDICT_DONE,
                .reason = _GRANT_REASON_INVALID,
                .status = 201,
                .request_bytes = 12,
                .response_bytes = 3456,
                .start_usec = 1764633600123456ULL,
                .duration_usec = 250000,
        };
        _cleanup_free_ char *s = NULL;
        json_object *o, *v;
        size_t n;

        assert_int_equal(grant_op_format(&op, &s, &n), 0);
        assert_int_equal(n, strlen(s));
        assert_int_equal(s[n - 1], '\n');
        assert_null(memchr(s, '\n', n - 1)); /* one line */
        assert_null(strchr(s, '?'));
        o = json_tokener_parse(s);
        assert_non_null(o);
        assert_int_equal(json_object_object_length(o), 13);
        assert_string_equal(json_object_get_string(member(o, "id")), "00ab0000cd0000ef");
        assert_string_equal(json_object_get_string(member(o, "grant")), "gh");
        assert_string_equal(json_object_get_string(member(o, "method")), "POST");
        assert_string_equal(json_object_get_string(member(o, "host")), "git.example");
        assert_int_equal(json_object_get_int(member(o, "port")), 443);
        assert_string_equal(json_object_get_string(member(o, "path_prefix")), "/api/repos/acme/");
        assert_string_equal(json_object_get_string(member(o, "verdict")), "done");
        assert_null(member(o, "reason"));
        assert_int_equal(json_object_get_int(member(o, "status")), 201);
        assert_int_equal(json_object_get_uint64(member(o, "request_bytes")), 12);
        assert_int_equal(json_object_get_uint64(member(o, "response_bytes")), 3456);
        assert_int_equal(json_object_get_uint64(member(o, "start_usec")), 1764633600123456ULL);
        assert_int_equal(json_object_get_uint64(member(o, "duration_usec")), 250000);
        json_object_put(o);
        free(s);

        /* refused before a grant was known: nulls */
        op = (GrantOp) {
                .id = 1,
                .method = _GRANT_METHOD_INVALID,
                .verdict = GRANT_VERDICT_REFUSED,
                .reason = GRANT_REASON_NO_GRANT,
                .status = -1,
        };
        assert_int_equal(grant_op_format(&op, &s, NULL), 0);
        o = json_tokener_parse(s);
        assert_non_null(o);
        assert_string_equal(json_object_get_string(member(o, "id")), "0000000000000001");
        assert_null(member(o, "grant"));
        assert_null(member(o, "method"));
        assert_null(member(o, "host"));
        assert_null(member(o, "port"));
        assert_null(member(o, "path_prefix"));
        assert_string_equal(json_object_get_string(member(o, "verdict")), "refused");
        assert_string_equal(json_object_get_string(member(o, "reason")), "no-grant");
        assert_null(member(o, "status"));
        v = member(o, "request_bytes");
        assert_int_equal(json_object_get_uint64(v), 0);
        json_object_put(o);

        op.verdict = _GRANT_VERDICT_INVALID;
        assert_int_equal(grant_op_format(&op, &s, NULL), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_names),
                cmocka_unit_test(test_prefix_accepted),
                cmocka_unit_test(test_prefix_refused),
                cmocka_unit_test(test_url_match),
                cmocka_unit_test(test_request_headers),
                cmocka_unit_test(test_response_headers),
                cmocka_unit_test(test_redact),
                cmocka_unit_test(test_cgroup),
                cmocka_unit_test(test_grant_file),
                cmocka_unit_test(test_grant_file_refused),
                cmocka_unit_test(test_grant_from_json),
                cmocka_unit_test(test_request_parse),
                cmocka_unit_test(test_replies),
                cmocka_unit_test(test_op_format),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
