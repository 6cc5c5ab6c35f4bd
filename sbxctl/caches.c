/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sbxctl cache: the caller's named caches (docs/caches.md): list them, remove one, prune the expired. */
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "exit-codes.h"
#include "profile.h"
#include "common.h"
#include "options.h"
#include "verbs.h"

static int print_caches(sd_bus_message *reply, bool expiry) {
        _cleanup_(json_object_putp) json_object *a = NULL;
        int r;

        r = reply_json_array(reply, &a);
        if (r != 0 || !a)
                return r;
        if (arg_legend)
                printf("%-20s %-16s %12s  %-25s %s\n", "PROFILE", "CACHE", "BYTES", "LAST USE",
                       expiry ? "EXPIRES" : "");
        for (size_t i = 0; i < json_object_array_length(a); i++) {
                json_object *o = json_object_array_get_idx(a, i), *v;
                char used[TIMESTAMP_MAX], exp[TIMESTAMP_MAX];
                const char *profile = "?", *name = "?";
                uint64_t bytes = 0, last = 0, until = 0;
                bool in_use = false;

                if (json_object_object_get_ex(o, "profile", &v))
                        profile = json_object_get_string(v);
                if (json_object_object_get_ex(o, "name", &v))
                        name = json_object_get_string(v);
                if (json_object_object_get_ex(o, "bytes", &v))
                        bytes = json_object_get_uint64(v);
                if (json_object_object_get_ex(o, "last_use", &v))
                        last = json_object_get_uint64(v);
                if (json_object_object_get_ex(o, "expires_at", &v) && v)
                        until = json_object_get_uint64(v);
                if (json_object_object_get_ex(o, "in_use", &v))
                        in_use = json_object_get_boolean(v);
                printf("%-20s %-16s %12" PRIu64 "  %-25s %s%s\n", profile, name, bytes, format_timestamp(used, last),
                       !expiry ? "" : until ? format_timestamp(exp, until) : "never",
                       in_use ? " (in use)" : "");
        }
        return 0;
}

/* ListCaches, or PruneCaches (which lists what it kept): the caches of its reply */
static int call_print_caches(const char *method, bool expiry) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = call_daemon_reply(method, &reply, NULL);
        return r != 0 ? r : print_caches(reply, expiry);
}

static int cache_list(int argc, char **argv) {
        return call_print_caches("ListCaches", true);
}

static int cache_prune(int argc, char **argv) {
        return call_print_caches("PruneCaches", false);
}

static int cache_rm(int argc, char **argv) {
        int r, ret = 0;

        for (int i = 0; i < argc; i++) {
                _cleanup_free_ char *profile = NULL;
                const char *slash = strchr(argv[i], '/');

                if (!slash || !(profile = strndup(argv[i], (size_t) (slash - argv[i]))) ||
                    !profile_name_is_valid(profile) || !cache_name_is_valid(slash + 1)) {
                        r = refused("cache rm: '%s' is not PROFILE/CACHE", argv[i]);
                        if (ret == 0)
                                ret = r;
                        continue;
                }
                r = call_daemon_reply("RemoveCache", NULL, "ss", profile, slash + 1);
                if (r != 0 && ret == 0)
                        ret = r;
        }
        return ret;
}

static const Verb cache_verbs[] = {
        { "list",  0, 0,        cache_list },
        { "rm",    1, VERB_ANY, cache_rm,   .usage = "expected one or more PROFILE/CACHE" },
        { "prune", 0, 0,        cache_prune },
        {}
};

int verb_cache(int argc, char **argv) {
        int r;

        if (argc == 0)
                return refused("cache: expected list, rm or prune");
        r = parse_argv_after_first(argc, argv);
        if (r <= 0)
                return -r;
        return verb_dispatch(cache_verbs, "cache", "list, rm, prune", argv[0], argc - optind, argv + optind);
}
