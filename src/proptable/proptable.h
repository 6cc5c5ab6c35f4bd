/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The property table: what a run's transient unit is made of, as typed values. One table feeds every
 * renderer (unit-file "Key=Value" text here, D-Bus a(sv) for StartTransientUnit in sbxd/unit-bus.c),
 * so the two cannot drift apart. Pure: no D-Bus, no syscalls. */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "macro.h"

typedef enum PropKind {
        PROP_BOOL,          /* b */
        PROP_STRING,        /* s */
        PROP_U64,           /* t, plain number */
        PROP_BYTES,         /* t, bytes; "infinity" for UINT64_MAX */
        PROP_USEC,          /* t, text renders in seconds/ms with the Sec name */
        PROP_CPU_QUOTA,     /* t, usec per sec; text renders CPUQuota=N% */
        PROP_CAPS,          /* t, capability mask; only the empty set is rendered here */
        PROP_NAMESPACES,    /* t, allowed CLONE_NEW* flags; 0 renders "yes" (all restricted), else the names */
        PROP_ERRNO,         /* i, errno number; text renders the name */
        PROP_MODE,          /* u, octal file mode */
        PROP_STRV,          /* as, text joined by spaces */
        PROP_ENVIRONMENT,   /* as, text quoted */
        PROP_SYSCALL_ALLOW, /* (bas) allow-list */
        PROP_SYSCALL_DENY,  /* (bas) deny-list; text "SystemCallFilter=~..." */
        PROP_FAMILY_ALLOW,  /* (bas) allow-list */
        PROP_BIND_PATHS,    /* a(ssbt): pairs source, destination; recursive */
        PROP_TMPFS,         /* a(ss): pairs path, options */
        PROP_IP_ADDRESSES,  /* a(iayu): "ADDRESS/PREFIX" strings; text joined by spaces */
        _PROP_KIND_MAX,
        _PROP_KIND_INVALID = -EINVAL,
} PropKind;

typedef struct PropDef {
        const char *name;     /* unit-file key (unique in the table; "SystemCallFilter~" is the deny-list form) */
        const char *bus_name; /* D-Bus property name for StartTransientUnit */
        PropKind kind;
} PropDef;

typedef struct Prop {
        const PropDef *def;
        bool b;
        uint64_t u;
        int i;
        char *s;
        char **strv; /* for pair kinds: src, dst, src, dst, ... */
} Prop;

typedef struct PropTable {
        Prop *props;
        size_t n;
} PropTable;

const PropDef *prop_def_find(const char *name);

PropTable *prop_table_new(void);
PropTable *prop_table_free(PropTable *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(PropTable *, prop_table_free);

int prop_table_add_bool(PropTable *t, const char *name, bool b);
int prop_table_add_string(PropTable *t, const char *name, const char *s);
int prop_table_add_u64(PropTable *t, const char *name, uint64_t u); /* all t-kinds */
int prop_table_add_errno(PropTable *t, const char *name, int e);
int prop_table_add_strv(PropTable *t, const char *name, char * const *l); /* copies */
/* Appends to the list property 'name' if the table has it, else adds it. */
int prop_table_extend_strv(PropTable *t, const char *name, char * const *l);
const Prop *prop_table_get(const PropTable *t, const char *name);

/* "Key=Value\n" lines, in table order, as in a [Service] section. */
int prop_table_render_text(const PropTable *t, char **ret);
/* "sha256:<hex>" of the text rendering: names the effective policy in run records. */
int prop_table_digest(const PropTable *t, char ret[static 72]);
