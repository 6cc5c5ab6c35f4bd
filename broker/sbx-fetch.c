/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sbx-fetch: a run's client of the credential broker (docs/credentials.md).
 *
 *   sbx-fetch --grant NAME [-X METHOD] [-H 'Name: value']... [--data-file FILE|-] [-i] URL
 *
 * Sends one request to the broker at $SBX_BROKER (set in runs whose profile has grants) and writes the
 * response's body to standard output; with -i, "HTTP STATUS", the response's headers and an empty line
 * go to standard error first. The method is GET, or POST with --data-file. Only libc and json-c: it runs
 * inside runs.
 *
 * Exit status: 0 for an HTTP status below 400, 22 for 400 and above (as curl -f), 2 for a usage error
 * (an unreadable or too large --data-file too), 3 when the broker refused the request ("sbx-fetch:
 * refused (REASON): MESSAGE"), 4 when the broker cannot be reached (SBX_BROKER unset included), 5 when
 * the broker could not reach the upstream (reason "upstream"), 1 for anything else (standard output not
 * writable, a malformed or cut reply). */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#define EXIT_HTTP_ERROR 22
#define EXIT_USAGE 2
#define EXIT_REFUSED 3
#define EXIT_UNREACHABLE 4
#define EXIT_UPSTREAM 5

#define BODY_MAX ((size_t) 64 << 20)  /* the largest max_body a grant may have */
#define REPLY_LINE_MAX (1024 * 1024)  /* the reply's line: status and headers */
#define HEADERS_MAX 64
#define REPLY_TIMEOUT_SEC 120         /* the broker gives up on the upstream after 30 s */

typedef struct Args {
        const char *grant;
        const char *method;
        const char *data_file;
        const char *url;
        bool include;
        char *headers[2 * HEADERS_MAX]; /* name, value, ... */
        size_t n_headers;
} Args;

__attribute__((format(printf, 2, 3))) static int fail(int status, const char *fmt, ...) {
        va_list ap;

        fputs("sbx-fetch: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        return status;
}

static void help(FILE *f) {
        fputs("Usage: sbx-fetch --grant NAME [-X METHOD] [-H 'Name: value']... [--data-file FILE|-] [-i] URL\n\n"
              "Performs an HTTP(S) request through the sbx credential broker, which adds the secret of the\n"
              "run's grant NAME. The response's body goes to standard output.\n\n"
              "  --grant NAME         the grant of the run's profile to use\n"
              "  -X, --request METHOD GET HEAD POST PUT PATCH DELETE (default: GET; POST with --data-file)\n"
              "  -H, --header 'N: V'  a request header (repeatable)\n"
              "      --data-file FILE the request's body, from FILE or standard input (-)\n"
              "  -i, --include        the status and the response's headers to standard error first\n\n"
              "Exit status: 0 HTTP status < 400, 22 HTTP status >= 400, 2 usage, 3 refused by the broker,\n"
              "4 broker unreachable, 5 upstream failure, 1 other errors.\n", f);
}

/* "Name: value" -> name, value (value's leading white space dropped) */
static int add_header(Args *a, const char *arg) {
        const char *colon = strchr(arg, ':'), *v;
        size_t n;

        if (!colon || colon == arg)
                return fail(EXIT_USAGE, "-H '%s': expected 'Name: value'", arg);
        if (a->n_headers >= HEADERS_MAX)
                return fail(EXIT_USAGE, "at most %d headers", HEADERS_MAX);
        n = (size_t) (colon - arg);
        for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
                ;
        a->headers[2 * a->n_headers] = strndup(arg, n);
        a->headers[2 * a->n_headers + 1] = strdup(v);
        if (!a->headers[2 * a->n_headers] || !a->headers[2 * a->n_headers + 1])
                return fail(1, "out of memory");
        a->n_headers++;
        return 0;
}

static int parse_argv(int argc, char *argv[], Args *a) {
        enum { ARG_GRANT = 0x100, ARG_DATA_FILE };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "grant", required_argument, NULL, ARG_GRANT },
                { "request", required_argument, NULL, 'X' },
                { "header", required_argument, NULL, 'H' },
                { "data-file", required_argument, NULL, ARG_DATA_FILE },
                { "include", no_argument, NULL, 'i' },
                {}
        };
        int c, r;

        while ((c = getopt_long(argc, argv, "hX:H:i", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help(stdout);
                        exit(0);
                case ARG_GRANT:
                        a->grant = optarg;
                        break;
                case 'X':
                        a->method = optarg;
                        break;
                case 'H':
                        r = add_header(a, optarg);
                        if (r != 0)
                                return r;
                        break;
                case ARG_DATA_FILE:
                        a->data_file = optarg;
                        break;
                case 'i':
                        a->include = true;
                        break;
                default:
                        help(stderr);
                        return EXIT_USAGE;
                }
        if (!a->grant)
                return fail(EXIT_USAGE, "--grant NAME is required");
        if (optind + 1 != argc)
                return fail(EXIT_USAGE, "expected one URL");
        a->url = argv[optind];
        if (!a->method)
                a->method = a->data_file ? "POST" : "GET";
        return 0;
}

static int read_body(const char *path, char **ret, size_t *ret_size) {
        FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
        size_t n = 0, allocated = 0;
        char *b = NULL;

        if (!f)
                return fail(EXIT_USAGE, "cannot read %s: %s", path, strerror(errno));
        for (;;) {
                size_t k;

                if (n == allocated) {
                        char *nb;

                        if (allocated > BODY_MAX) {
                                free(b);
                                return fail(EXIT_USAGE, "%s is larger than %zu bytes", path, BODY_MAX);
                        }
                        allocated = allocated ? 2 * allocated : 65536;
                        nb = realloc(b, allocated);
                        if (!nb) {
                                free(b);
                                return fail(1, "out of memory");
                        }
                        b = nb;
                }
                k = fread(b + n, 1, allocated - n, f);
                n += k;
                if (k == 0)
                        break;
        }
        if (ferror(f)) {
                free(b);
                return fail(EXIT_USAGE, "cannot read %s: %s", path, strerror(errno));
        }
        if (f != stdin)
                fclose(f);
        if (n > BODY_MAX) {
                free(b);
                return fail(EXIT_USAGE, "%s is larger than %zu bytes", path, BODY_MAX);
        }
        *ret = b;
        *ret_size = n;
        return 0;
}

static char *request_line(const Args *a, size_t body_size) {
        json_object *o = json_object_new_object(), *h = json_object_new_object();
        char *line = NULL;

        if (!o || !h)
                goto out;
        for (size_t i = 0; i < a->n_headers; i++)
                json_object_object_add(h, a->headers[2 * i], json_object_new_string(a->headers[2 * i + 1]));
        json_object_object_add(o, "grant", json_object_new_string(a->grant));
        json_object_object_add(o, "method", json_object_new_string(a->method));
        json_object_object_add(o, "url", json_object_new_string(a->url));
        json_object_object_add(o, "headers", h);
        h = NULL;
        if (body_size > 0)
                json_object_object_add(o, "body_bytes", json_object_new_int64((int64_t) body_size));
        if (asprintf(&line, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN)) < 0)
                line = NULL;
out:
        json_object_put(h);
        json_object_put(o);
        return line;
}

/* Sends all of it; false when the broker stopped reading (it replied and closed: read the reply). */
static bool send_all(int fd, const char *p, size_t n) {
        while (n > 0) {
                ssize_t k = send(fd, p, n, MSG_NOSIGNAL);

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return false;
                }
                p += k;
                n -= (size_t) k;
        }
        return true;
}

static int write_all(int fd, const char *p, size_t n) {
        while (n > 0) {
                ssize_t k = write(fd, p, n);

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                p += k;
                n -= (size_t) k;
        }
        return 0;
}

static int connect_broker(int *ret) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct timeval tv = { .tv_sec = REPLY_TIMEOUT_SEC };
        const char *path = getenv("SBX_BROKER");
        int fd;

        if (!path || !*path)
                return fail(EXIT_UNREACHABLE, "SBX_BROKER is not set: this run has no broker grants");
        if (strlen(path) >= sizeof(sa.sun_path))
                return fail(EXIT_UNREACHABLE, "cannot reach the broker at %s: %s", path, strerror(ENAMETOOLONG));
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                int e = errno;

                if (fd >= 0)
                        close(fd);
                return fail(EXIT_UNREACHABLE, "cannot reach the broker at %s: %s", path, strerror(e));
        }
        (void) setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        *ret = fd;
        return 0;
}

/* Reads the reply's line into buf (NUL-terminated in place of its '\n'); *ret_rest: the bytes after it. */
static int read_reply_line(int fd, char *buf, size_t *ret_line, size_t *ret_total) {
        const char *path = getenv("SBX_BROKER");
        size_t n = 0;
        char *nl = NULL;

        while (!nl) {
                ssize_t k;

                if (n == REPLY_LINE_MAX)
                        return fail(1, "the broker's reply line is longer than %d bytes", REPLY_LINE_MAX);
                k = recv(fd, buf + n, REPLY_LINE_MAX - n, 0);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return fail(EXIT_UNREACHABLE, "cannot reach the broker at %s: %s", path,
                                    errno == EAGAIN ? "no reply in time" : strerror(errno));
                if (k == 0)
                        return fail(n == 0 ? EXIT_UNREACHABLE : 1, "the broker at %s closed the connection without a "
                                    "complete reply", path);
                nl = memchr(buf + n, '\n', (size_t) k);
                n += (size_t) k;
        }
        *nl = 0;
        *ret_line = (size_t) (nl - buf);
        *ret_total = n;
        return 0;
}

static const char *member_string(json_object *o, const char *key) {
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ?
               json_object_get_string(v) : NULL;
}

static int print_headers(json_object *reply, int status) {
        json_object *headers;

        fprintf(stderr, "HTTP %d\n", status);
        if (json_object_object_get_ex(reply, "headers", &headers) && json_object_is_type(headers, json_type_array))
                for (size_t i = 0; i < json_object_array_length(headers); i++) {
                        json_object *pair = json_object_array_get_idx(headers, i);

                        if (json_object_is_type(pair, json_type_array) && json_object_array_length(pair) == 2)
                                fprintf(stderr, "%s: %s\n", json_object_get_string(json_object_array_get_idx(pair, 0)),
                                        json_object_get_string(json_object_array_get_idx(pair, 1)));
                }
        fputc('\n', stderr);
        return 0;
}

/* The reply: an error, or the status, the headers and the body (partly in buf already). */
static int handle_reply(int fd, const Args *a, char *buf, size_t line, size_t total) {
        json_object *reply = json_tokener_parse(buf), *v;
        const char *error, *reason;
        int64_t status = 0, body = -1;
        size_t have = total - line - 1;
        int r = 0;

        if (!reply || !json_object_is_type(reply, json_type_object)) {
                r = fail(1, "malformed reply from the broker");
                goto out;
        }
        error = member_string(reply, "error");
        if (error) {
                reason = member_string(reply, "reason");
                if (reason && strcmp(reason, "upstream") == 0)
                        r = fail(EXIT_UPSTREAM, "upstream failure: %s", error);
                else
                        r = fail(EXIT_REFUSED, "refused (%s): %s", reason ? reason : "unknown", error);
                goto out;
        }
        if (json_object_object_get_ex(reply, "status", &v) && json_object_is_type(v, json_type_int))
                status = json_object_get_int64(v);
        if (json_object_object_get_ex(reply, "body_bytes", &v) && json_object_is_type(v, json_type_int))
                body = json_object_get_int64(v);
        if (status < 100 || status > 999 || body < 0 || (uint64_t) body > BODY_MAX || have > (uint64_t) body) {
                r = fail(1, "malformed reply from the broker");
                goto out;
        }
        if (a->include)
                print_headers(reply, (int) status);

        if (write_all(STDOUT_FILENO, buf + line + 1, have) < 0) {
                r = fail(1, "cannot write the body: %s", strerror(errno));
                goto out;
        }
        while (have < (uint64_t) body) {
                size_t want = (uint64_t) body - have < REPLY_LINE_MAX ? (size_t) ((uint64_t) body - have) : REPLY_LINE_MAX;
                ssize_t k = recv(fd, buf, want, 0);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0) {
                        r = fail(1, "the broker's reply ended after %zu of %" PRId64 " bytes of body", have, body);
                        goto out;
                }
                if (write_all(STDOUT_FILENO, buf, (size_t) k) < 0) {
                        r = fail(1, "cannot write the body: %s", strerror(errno));
                        goto out;
                }
                have += (size_t) k;
        }
        r = status >= 400 ? EXIT_HTTP_ERROR : 0;
out:
        json_object_put(reply);
        return r;
}

int main(int argc, char *argv[]) {
        Args a = {};
        char *body = NULL, *line = NULL, *buf = NULL;
        size_t body_size = 0, reply_line = 0, reply_total = 0;
        int fd = -1, r;

        r = parse_argv(argc, argv, &a);
        if (r == 0 && a.data_file)
                r = read_body(a.data_file, &body, &body_size);
        if (r == 0 && !(line = request_line(&a, body_size)))
                r = fail(1, "out of memory");
        if (r == 0)
                r = connect_broker(&fd);
        if (r == 0) {
                /* a refusal may come before the body is taken: the reply says why */
                if (send_all(fd, line, strlen(line)))
                        (void) send_all(fd, body, body_size);
                (void) shutdown(fd, SHUT_WR);
                buf = malloc(REPLY_LINE_MAX);
                if (!buf)
                        r = fail(1, "out of memory");
        }
        if (r == 0)
                r = read_reply_line(fd, buf, &reply_line, &reply_total);
        if (r == 0)
                r = handle_reply(fd, &a, buf, reply_line, reply_total);

        if (fd >= 0)
                close(fd);
        free(buf);
        free(line);
        free(body);
        for (size_t i = 0; i < 2 * a.n_headers; i++)
                free(a.headers[i]);
        return r;
}
