/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sbxctl cache: the caller's named caches (docs/caches.md): list them, remove one, prune the expired. */
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

int verb_cache(int argc, char **argv) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *verb;
        int r, ret = 0;

        if (argc == 0)
                return refused("cache: expected list, rm or prune");
        verb = argv[0];
        r = parse_argv_after_first(argc, argv);
        if (r <= 0)
                return -r;
        argv += optind;
        argc -= optind;
        if (streq(verb, "list") || streq(verb, "prune")) {
                bool list = streq(verb, "list");

                if (argc != 0)
                        return refused("cache %s: unexpected argument '%s'", verb, argv[0]);
                r = call_daemon_reply(list ? "ListCaches" : "PruneCaches", &reply, NULL);
                if (r != 0)
                        return r;
                return print_caches(reply, list);
        }
        if (streq(verb, "rm")) {
                if (argc < 1)
                        return refused("cache rm: expected one or more PROFILE/CACHE");
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
        return refused("cache: unknown command '%s' (list, rm, prune)", verb);
}
