/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A command line and its environment on their way from sbxd to the exec helper (sandbox-proto.h): the
 * strings one after the other, each NUL-terminated (argv, then env), in a sealed memfd passed with the
 * EXEC message, never in a unit's properties. Bytes: anything but NUL. */

#include <stdint.h>

/* The most a memfd may hold: what execve() takes at most (command.h), with room to spare. */
#define COMMAND_FD_MAX (8U * 1024U * 1024U)

/* A sealed memfd holding argv's strings, then env's (env may be NULL). */
int command_fd_new(char **argv, char **env, int *ret_fd);

/* Reads fd back as argc strings of argv and envc of env (NULL-terminated arrays whose strings share one
 * buffer: command_fd_free() frees them). -EBADMSG unless the file holds exactly that many strings. */
int command_fd_read(int fd, uint32_t argc, uint32_t envc, char ***ret_argv, char ***ret_env);

/* Frees what command_fd_read() returned (either may be NULL). */
void command_fd_free(char **argv, char **env);
