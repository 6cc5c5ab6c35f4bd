/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sbxctl secret add, list and rm: the caller's stored secrets (given to runs with --credential). */
#include <getopt.h>
#include <stdio.h>
#include <sys/mman.h>
#include <termios.h>
#include <unistd.h>

#include "common.h"
#include "options.h"
#include "policy.h"
#include "verbs.h"

/* The value: one line typed without echo on a terminal, else all of stdin; into a memfd for sbxd (never a
 * file on disk, never argv). */
static int secret_value_fd(const char *name, int *ret) {
        char *buf;
        size_t n = 0, alloc = SECRET_MAX + 2;
        bool tty = isatty(STDIN_FILENO);
        int r = 0;

        buf = mmap(NULL, alloc, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (buf == MAP_FAILED)
                return -failed("out of memory");
        (void) mlock(buf, alloc);
        (void) madvise(buf, alloc, MADV_DONTDUMP);
        if (tty) {
                struct termios old, quiet;
                bool saved;

                fprintf(stderr, "Value of secret %s: ", name);
                fflush(stderr);
                /* no echo, and no signals: Ctrl-C and Ctrl-Z are read here (and cancel), so that the
                 * terminal always gets its echo back */
                saved = tcgetattr(STDIN_FILENO, &old) == 0;
                if (saved) {
                        quiet = old;
                        quiet.c_lflag &= ~(tcflag_t) (ECHO | ISIG);
                        (void) tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
                }
                while (n < alloc - 1) {
                        ssize_t k = read(STDIN_FILENO, buf + n, 1);

                        if (k <= 0 || buf[n] == '\n' || buf[n] == '\r')
                                break;
                        if (buf[n] == 0x03 || buf[n] == 0x1a || buf[n] == 0x1c) { /* ^C ^Z ^\ */
                                r = -refused("secret add: cancelled");
                                break;
                        }
                        n++;
                }
                if (saved)
                        (void) tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
                fputc('\n', stderr);
        } else
                for (;;) {
                        ssize_t k = read(STDIN_FILENO, buf + n, alloc - n);

                        if (k < 0 && errno == EINTR)
                                continue;
                        if (k < 0) {
                                r = -failed("secret add: cannot read stdin: %m");
                                break;
                        }
                        if (k == 0 || (n += (size_t) k) == alloc)
                                break;
                }
        if (r == 0 && n == 0)
                r = -refused("secret add: the value is empty");
        if (r == 0 && n > SECRET_MAX)
                r = -refused("secret add: the value is larger than %u KiB", SECRET_MAX / 1024);
        if (r == 0 && memfd_sealed(buf, n, ret) < 0)
                r = -failed("secret add: cannot pass the value in a memfd: %m");
        explicit_bzero(buf, alloc);
        munmap(buf, alloc);
        return r;
}

static int secret_add(int argc, char **argv) {
        _cleanup_close_ int fd = -EBADF;
        const char *name = argv[0];
        int r;

        if (!credential_name_is_valid(name))
                return refused("secret add: '%s' is not a credential name ([a-z][a-z0-9_-]{0,63})", name);
        r = secret_value_fd(name, &fd);
        if (r < 0)
                return -r;
        return call_daemon_reply("AddSecret", NULL, "shb", name, fd, (int) arg_replace);
}

static int secret_list(int argc, char **argv) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(json_object_putp) json_object *list = NULL;
        int r;

        r = call_daemon_reply("ListSecrets", &reply, NULL);
        if (r == 0)
                r = reply_json_array(reply, &list);
        if (r != 0 || !list)
                return r;
        if (arg_legend)
                printf("%-32s %s\n", "NAME", "MODIFIED");
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                json_object *o = json_object_array_get_idx(list, i), *name = NULL, *mod = NULL;

                (void) json_object_object_get_ex(o, "name", &name);
                (void) json_object_object_get_ex(o, "modified_at", &mod);
                printf("%-32s %s\n", json_object_get_string(name), mod ? json_object_get_string(mod) : "-");
        }
        return 0;
}

static int secret_rm(int argc, char **argv) {
        return call_daemon_each("RemoveSecret", argc, argv);
}

static const Verb secret_verbs[] = {
        { "add",  1, 1,        secret_add,  .usage = "expected exactly one name (the value is read from stdin)" },
        { "list", 0, 0,        secret_list },
        { "rm",   1, VERB_ANY, secret_rm,   .usage = "expected one or more names" },
        {}
};

int verb_secret(int argc, char **argv) {
        int r;

        if (argc == 0)
                return refused("secret: expected add, list or rm");
        /* options after the subcommand too: "secret add --replace NAME", "secret list --json" */
        r = parse_argv_after_first(argc, argv);
        if (r <= 0)
                return -r;
        return verb_dispatch(secret_verbs, "secret", "add, list, rm", argv[0], argc - optind, argv + optind);
}
