/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Credentials (docs/credentials.md): a caller's secrets kept encrypted at rest by systemd-creds, per
 * tenant; a run's credentials delivered only as files of its unit's credentials directory
 * (LoadCredentialEncrypted=), never in its environment, argv, record or the journal; and a run's broker
 * grants, written for the broker (sbx-broker(8)) while the run lives, with the broker's operations log
 * read into the record when it ends. */

#include <stdbool.h>
#include <systemd/sd-bus.h>

#include "policy.h"
#include "record.h"

#define SBX_SECRETS_DIR SBX_STATEDIR "/secrets"     /* TENANT/NAME.cred, root only */
#define SBX_RUN_CREDENTIALS_DIR "/run/sbx/credentials" /* RUN/NAME.cred: a run's own, encrypted */
#define SBX_SECRET_MAX (64U * 1024U)
#define SBX_SYSTEMD_CREDS "/usr/bin/systemd-creds"

/* org.sbx.Manager1.AddSecret(s name, h value, b replace), ListSecrets() -> s, RemoveSecret(s name) */
int secrets_method_add(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int secrets_method_list(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int secrets_method_remove(sd_bus_message *msg, void *userdata, sd_bus_error *error);

/* A run's credentials, ready for its unit: name and encrypted file each. */
typedef struct RunCredentialFiles {
        char **names;
        char **paths;
        bool staged;               /* SBX_RUN_CREDENTIALS_DIR/RUN exists (credentials given as fds) */
        char run_id[RUN_ID_LEN + 1];
} RunCredentialFiles;

void run_credential_files_done(RunCredentialFiles *f);

/* Checks that the tenant has the stored secrets req->credentials names, reads the ones given as file
 * descriptors and encrypts them into SBX_RUN_CREDENTIALS_DIR/RUN. Errors are named errors in 'error'. */
int run_credentials_prepare(const char *tenant, const char *run_id, const RunRequest *req, RunCredentialFiles *ret,
                            sd_bus_error *error);
/* LoadCredentialEncrypted= of the run's unit, to its StartTransientUnit call. */
int run_credentials_append(sd_bus_message *call, const RunCredentialFiles *f);
/* Writes SBX_GRANTS_DIR/RUN.json for the broker: the run's grants, tenant and cgroup. */
int run_grants_write(const Profile *p, const char *run_id, const char *tenant, const char *cgroup_path);
/* The broker's operations log of the run, into rec's credentials section. */
void run_grants_take_operations(const char *run_id, RunRecord *rec);
/* Removes what sbx made for the run (its staged credentials, its grant file and operations log). */
void run_credentials_remove(const char *run_id);
/* Whether the unit's credentials directory and everything of run_credentials_remove() are gone. */
bool run_credentials_gone(const char *unit, const char *run_id);
/* Removes what runs no longer running left (has_run: whether a run of this id is known). */
void run_credentials_sweep(bool (*has_run)(const char *run_id, void *userdata), void *userdata);
