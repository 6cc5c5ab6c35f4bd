/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sbxctl image: import, list and remove base images (docs/images.md). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "exit-codes.h"
#include "image.h"
#include "common.h"
#include "options.h"
#include "verbs.h"

/* an import copies, hashes and builds dm-verity data of the whole image: minutes for a big one */
#define IMPORT_TIMEOUT_USEC (30 * 60 * USEC_PER_SEC)

static int image_import(const char *name, const char *path) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_close_ int fd = -EBADF;
        const char *digest;
        int r;

        if (!image_name_is_valid(name))
                return refused("image import: '%s' is not a name (1-64 of a-z 0-9 . _ -, starting with a letter or digit)",
                               name);
        /* the caller opens it: what is imported is what the caller can read */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return refused("image import: cannot open %s: %s", path, strerror(errno));
        r = call_daemon_reply_timeout(IMPORT_TIMEOUT_USEC, "ImportImage", &reply, "sh", name, fd);
        if (r != 0)
                return r;
        if (sd_bus_message_read(reply, "s", &digest) < 0)
                return failed("sbxd sent an invalid reply");
        printf("%s@sha256:%s\n", name, digest);
        return 0;
}

static int image_list(void) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(json_object_putp) json_object *list = NULL;
        int r;

        r = call_daemon_reply("ListImages", &reply, NULL);
        if (r == 0)
                r = reply_json_array(reply, &list);
        if (r != 0 || !list)
                return r;
        printf("%-24s %-71s %-9s %12s %s\n", "NAME", "DIGEST", "FORMAT", "SIZE", "IN USE");
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                json_object *o = json_object_array_get_idx(list, i), *name = NULL, *digest = NULL, *format = NULL,
                            *size = NULL, *used = NULL;

                (void) json_object_object_get_ex(o, "name", &name);
                (void) json_object_object_get_ex(o, "digest", &digest);
                (void) json_object_object_get_ex(o, "format", &format);
                (void) json_object_object_get_ex(o, "size", &size);
                (void) json_object_object_get_ex(o, "in_use", &used);
                printf("%-24s sha256:%-64s %-9s %12" PRIu64 " %s\n", json_object_get_string(name),
                       json_object_get_string(digest), json_object_get_string(format),
                       (uint64_t) json_object_get_int64(size), json_object_get_boolean(used) ? "yes" : "no");
        }
        return 0;
}

static int image_import_verb(int argc, char **argv) {
        return image_import(argv[0], argv[1]);
}

static int image_list_verb(int argc, char **argv) {
        int r = parse_argv_after_first(argc + 1, argv - 1); /* --json after the command */

        if (r <= 0)
                return -r;
        if (optind < argc + 1)
                return refused("image list: unexpected argument '%s'", argv[optind - 1]);
        return image_list();
}

static int image_rm(int argc, char **argv) {
        return call_daemon_each("RemoveImage", argc, argv);
}

static const Verb image_verbs[] = {
        { "import", 2, 2,        image_import_verb, .usage = "expected NAME and a FILE or DIR" },
        { "list",   0, VERB_ANY, image_list_verb },
        { "rm",     1, VERB_ANY, image_rm,          .usage = "expected one or more NAME[@sha256:DIGEST]" },
        {}
};

int verb_image(int argc, char **argv) {
        if (argc < 1)
                return refused("image: expected a command (import, list, rm)");
        return verb_dispatch(image_verbs, "image", "import, list, rm", argv[0], argc - 1, argv + 1);
}
