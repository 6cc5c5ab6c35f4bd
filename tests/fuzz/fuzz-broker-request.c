/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a run's workload sends the credential broker (broker/sbx-broker.c, src/grant/grant.c): the input
 * is what arrives on the connection, a request line and the start of a body. It goes through the checks
 * check_request() makes, against a fixed grant file: the line's JSON, the grant's name, the method, the
 * URL against the grant's prefix, every header; then the body is redacted of the secret and the
 * operations log's line and the error reply are formatted. The same bytes are read as the peer's
 * /proc/PID/cgroup (the names of cgroups a run may create are its own) and as a grant file. */
#include <errno.h>

#include "fuzz.h"
#include "grant.h"

#define RUN "0123456789abcdef0123456789abcdef"
#define GRANT(methods, prefix)                                                                            \
        "{\"credential\":\"github\",\"methods\":" methods ",\"url_prefix\":\"" prefix "\","                 \
        "\"header\":\"Authorization\",\"value_prefix\":\"Bearer \",\"max_body\":1048576}"
static const char grant_file[] =
        "{\"run\":\"" RUN "\",\"tenant\":\"fedcba9876543210fedcba9876543210\","
        "\"cgroup\":\"/sbx.slice/sbx-dev.slice/sbx-dev-" RUN ".service\",\"grants\":{"
        "\"gh\":" GRANT("[\"GET\",\"POST\"]", "https://git.example:443/api/repos/acme/") ","
        "\"local\":" GRANT("[\"GET\",\"HEAD\",\"PUT\",\"PATCH\",\"DELETE\"]", "http://[2001:db8::1]:8080/v1/") ","
        "\"root\":" GRANT("[\"GET\"]", "https://192.0.2.1/") "}}";
static const char secret[] = "s3cr3t-t0ken";

static GrantFile *grants;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
        if (grant_file_parse(grant_file, strlen(grant_file), "fuzz.json", &grants, NULL) < 0)
                abort();
        return 0;
}

static void check_request(const char *line, size_t line_size, uint8_t *body, size_t body_size) {
        _cleanup_(grant_request_done) GrantRequest req = {};
        _cleanup_(grant_url_done) GrantUrl url = {};
        _cleanup_free_ char *error = NULL, *why = NULL, *op_line = NULL, *reply = NULL, *formatted = NULL;
        GrantOp op = { .method = _GRANT_METHOD_INVALID, .verdict = GRANT_VERDICT_REFUSED,
                       .reason = GRANT_REASON_BAD_REQUEST, .status = -1 };
        const Grant *g;
        size_t n;
        int r;

        r = grant_request_parse(line, line_size, &req, &error);
        if (r < 0) {
                fuzz_check(r == -EINVAL || r == -ENOMEM);
                goto log;
        }
        fuzz_check(req.grant && req.method && req.url);
        op.method = grant_method_from_string(req.method);
        g = grant_file_find(grants, req.grant);
        if (!g)
                goto log;
        op.grant = g->name;
        op.host = g->url_prefix.host;
        op.port = g->url_prefix.port;
        op.path_prefix = g->url_prefix.path;
        if (op.method < 0 || !grant_allows_method(g, op.method))
                goto log;
        r = grant_url_match(g, req.url, &url, &why);
        if (r < 0) {
                fuzz_check(r == -EINVAL || r == -EPERM || r == -ENOMEM);
                fuzz_check(r == -ENOMEM || why);
                goto log;
        }
        /* what was accepted lies below the prefix, and reads back as itself */
        fuzz_check(url.host && url.path);
        fuzz_check(streq(url.host, g->url_prefix.host) && url.port == g->url_prefix.port);
        fuzz_check(grant_path_covered(g->url_prefix.path, url.path));
        if (grant_url_format(&url, &formatted) >= 0) {
                _cleanup_(grant_url_done) GrantUrl again = {};
                _cleanup_free_ char *why2 = NULL;

                fuzz_check(grant_url_request_parse(formatted, &again, &why2) >= 0);
                fuzz_check(streq(again.path, url.path) && streq(again.host, url.host));
        }
        for (size_t i = 0; req.headers && req.headers[i]; i += 2) {
                fuzz_check(req.headers[i + 1]);
                if (!grant_header_name_is_valid(req.headers[i]) ||
                    !grant_request_header_allowed(g, req.headers[i], req.headers[i + 1]))
                        goto log;
                /* never a header of the broker's own */
                fuzz_check(strcasecmp(req.headers[i], "Authorization") != 0);
                fuzz_check(strcasecmp(req.headers[i], "Host") != 0);
        }
        op.request_bytes = req.body_bytes;
        op.verdict = GRANT_VERDICT_DONE;
        op.reason = _GRANT_REASON_INVALID;
        op.status = 200;

        r = grant_redact(body, body_size, secret, strlen(secret));
        fuzz_check(r >= 0);
        fuzz_check(!memmem(body, body_size, secret, strlen(secret)));
log:
        fuzz_check(grant_op_format(&op, &op_line, &n) >= 0);
        fuzz_check(n > 0 && op_line[n - 1] == '\n' && memchr(op_line, '\n', n) == op_line + n - 1);
        fuzz_check(grant_error_format(GRANT_REASON_BAD_REQUEST, error ?: "refused", &reply, &n) >= 0);
        fuzz_check(n > 0 && memchr(reply, '\n', n) == reply + n - 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *in = NULL, *path = NULL, *err = NULL;
        _cleanup_(grant_file_freep) GrantFile *f = NULL;
        const uint8_t *nl;
        size_t line_size;
        char run[RUN_ID_LEN + 1];

        if (size > GRANT_REQUEST_LINE_MAX)
                return 0;
        in = fuzz_strndup(data, size);
        nl = memchr(data, '\n', size);
        line_size = nl ? (size_t) (nl - data) : size;
        check_request(in, line_size, (uint8_t *) in + line_size, size - line_size);

        if (grant_cgroup_from_proc(in, &path) >= 0) {
                fuzz_check(path[0] == '/' && !strstr(path, "//") && !strstr(path, "/../") && !strchr(path, ' '));
                if (grant_cgroup_run_id(path, run) >= 0)
                        fuzz_check(run_id_is_valid(run));
        }
        (void) grant_cgroup_matches(in, "/sbx.slice/sbx-dev.slice/sbx-dev-" RUN ".service");
        {
                const char *u = grant_cgroup_unified_line(in);

                /* the last line, starting "0::" */
                fuzz_check(!u || (strneq(u, "0::", 3) && (!strchr(u, '\n') || strchr(u, '\n')[1] == 0)));
                (void) grant_cgroup_matches(u, "/sbx.slice/sbx-dev.slice/sbx-dev-" RUN ".service");
        }

        if (grant_file_parse((const char *) data, size, "fuzz.json", &f, &err) >= 0)
                fuzz_check(f->cgroup && run_id_is_valid(f->run));
        else
                fuzz_check(!f);
        return 0;
}
