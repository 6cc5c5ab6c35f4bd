/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sbxctl create and rm: long-lived sandboxes (exec runs commands in them, run.c). */
#include <stdio.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "command-line.h"
#include "common.h"
#include "policy.h"
#include "run.h"
#include "verbs.h"

int verb_create(int argc, char **argv) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        _cleanup_free_ char *workspace = NULL, *dataset = NULL;
        RunState s = {};
        const char *id;
        int r, ret = 0;

        if ((r = check_credential_files()) != 0)
                return r;
        if (command_env_given())
                return refused("create: -E/--setenv and --env-file are given to each command (exec), not to the "
                               "sandbox");
        if (arg_workspace && (r = resolve_dir("workspace", arg_workspace, &workspace)) != 0)
                return r;
        if (arg_dataset && (r = resolve_dir("dataset", arg_dataset, &dataset)) != 0)
                return r;
        {
                ClientRequest req;

                run_request_init(&req, workspace, dataset, -EBADF, true);
                if ((r = check_request_utf8(&req)) != 0)
                        return r;
        }
        r = run_state_open(&s, &bus, &event);
        if (r != 0)
                return r;
        r = sd_bus_message_new_method_call(bus, &call, SBX_BUS_NAME, SBX_BUS_PATH, SBX_BUS_INTERFACE, "CreateSandbox");
        if (r >= 0)
                r = append_request(call, workspace, dataset, -EBADF, true, NULL, NULL, NULL);
        if (r < 0)
                return failed("cannot build the request: %s", strerror(-r));
        r = call_for_id(bus, call, 120 * USEC_PER_SEC, &reply, &id);
        if (r != 0)
                return r;
        printf("%s\n", id);
        fflush(stdout);
        if (arg_detach)
                return 0;

        /* Attached: the sandbox lives as long as this connection. Ctrl-C removes it. */
        r = run_state_follow(&s, reply, id);
        if (r != 0)
                return r;
        r = sd_event_loop(event);
        if (r < 0)
                ret = failed("event loop failed: %s", strerror(-r));
        else if (s.disconnected && s.got_signal > 0)
                ret = 0; /* Ctrl-C ended ssh (-H) as well as us: the sandbox ends with its creator's connection */
        else if (s.disconnected)
                ret = complain(arg_host || arg_machine ? SBXCTL_EXIT_UNREACHABLE : SBX_EXIT_FAILURE,
                               "the connection to the system bus%s ended; sandbox %s ended with it", bus_owner(),
                               s.run_id);
        else if (s.daemon_gone)
                ret = failed("sbxd went away; sandbox %s ended with it", s.run_id);
        else if (!s.record)
                ret = failed("no valid record for sandbox %s", s.run_id);
        else if (s.record->stop_reason == STOP_REFUSED || s.record->stop_reason == STOP_START_FAILED)
                ret = failed("sandbox %s stopped: %s", s.run_id, strna(s.record->error));
        else if (s.record->stop_reason == STOP_TIMEOUT)
                ret = complain(SBX_EXIT_TIMEOUT, "sandbox %s reached its time limit", s.run_id);
        free(s.run_id);
        free(s.daemon);
        run_record_free(s.record);
        return ret;
}

int verb_rm(int argc, char **argv) {
        return call_daemon_each("RemoveSandbox", argc, argv);
}
