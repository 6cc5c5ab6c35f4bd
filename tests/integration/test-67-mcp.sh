#!/usr/bin/env bash
# sbx-mcp, the MCP server over stdio (docs/mcp.md), driven by MCP clients written elsewhere: the MCP
# SDK's client (two releases: protocol versions 2025-11-25 and 2025-06-18; it checks every tool result
# against the tool's outputSchema, and tests/mcp/lib.mjs checks again), a raw pipe that sends what no
# good client does, and the MCP inspector's CLI. Runs, a sandbox that builds a C program, files both
# ways, cancellation, the output cap, an egress denial, what the server's configuration refuses, two
# clients at once and a client that vanishes mid-command (nothing of it may be left).
# (The memory ceiling needs the memory controller: test-68-mcp-limits.sh, in the vm lane.)
# lane: native
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
. "$(dirname "$0")/testnet.sh"
. "$(dirname "$0")/mcp.sh"
t_require_systemd || t_summary
W=$(mktemp -d /var/tmp/sbxt-mcp.XXXXXX); t_on_exit "rm -rf '$W'"
chmod 0755 "$W"

t_begin "setup: node and the MCP clients; the SDK's client refuses a tool result that does not match the tool's outputSchema"
mcp_require_clients || t_summary
mcp client.mjs sdk-validates

t_begin "setup: sbx-mcp"
mcp_require_server || t_summary
t_log "$(sbx-mcp --version 2>&1 | head -n 1); node $(node --version)"

t_begin "initialize with both protocol versions, serverInfo, capabilities, tools/list with schemas, ping"
mcp client.mjs handshake -- sbx-mcp

t_begin "raw pipe: malformed JSON -32700, unknown method -32601, wrong params -32602, wrong shapes and a line over 4 MiB -32600; the server keeps serving"
mcp raw.mjs -- sbx-mcp

t_begin "run: argv and script, stdout and stderr apart, exit code, signal, timeout, env, stdin; show_run"
mcp client.mjs run -- sbx-mcp
id=$(mcp_info run_id)
assert_eq "finished 3" "$(record_get "$id" '"\(.state) \(.exit.code)"')" "sbxctl show of the first run"
assert_clean

t_begin "sandbox: write a C program and a Makefile, make it inside, read the source and the binary back, list_files"
mcp client.mjs sandbox-build workspace -- sbx-mcp --workspace "$W"
sb=$(mcp_info sandbox_id)
assert_eq "$W" "$(mcp_info sandbox_workspace)" "the sandbox's workspace: the server's default"
assert_eq "through the workspace" "$(cat "$W/from-mcp.txt" 2>&1)" "the file written into the workspace, seen on the host"
[ -n "$sb" ] && sb_gone "$sb"
assert_eq "cancelled" "$(record_get "$sb" .stop_reason)" "the removed sandbox's stop reason"
assert_eq true "$(record_get "$sb" .cleanup.completed)" "the removed sandbox's cleanup"
assert_clean

t_begin "cancel: notifications/cancelled stops a long command; its answer says cancelled; no unit is left"
mcp client.mjs cancel -- sbx-mcp
id=$(mcp_info run_id)
if [ -n "$id" ]; then
  for _ in $(seq 50); do [ "$(record_get "$id" .state)" = finished ] && break; sleep 0.2; done
  assert_eq "finished cancelled" "$(record_get "$id" '"\(.state) \(.stop_reason)"')" "the cancelled run's record"
fi
assert_eq "" "$(systemctl list-units --all --no-legend --plain 'sbx-run*' 'sbx-sandbox*' 2>&1)" "sbx units of runs"
assert_clean "after the cancelled run"

t_begin "output cap: stdout past --output-cap is cut and counted; the text says so"
mcp client.mjs output-cap 1024 -- sbx-mcp --output-cap 1K

t_begin "egress: a destination the coding profile does not open is denied; the denial is among agent_lines"
if ! testnet_up; then
  t_fail "$TN_ERROR"
else
  t_on_exit testnet_down
  mcp client.mjs egress coding "$TN_SRV" 80 -- sbx-mcp --profile coding
  id=$(mcp_info run_id)
  assert_eq denied "$(record_get "$id" ".network.destinations[] | select(.address == \"$TN_SRV\" and .port == 80) | .verdict")" \
    "the record's verdict on $TN_SRV:80"
  testnet_down
fi
assert_clean

t_begin "refused: a host path with no workspace configured, a profile not configured, ceilings over the server's; tool errors with sbxctl's sentence"
mcp client.mjs refused "$W" -- sbx-mcp --profile offline --memory-max 256M --timeout-max 1min
assert_clean

t_begin "the gVisor tier: a run of the untrusted profile runs in gVisor; a sandbox of it is refused with sbxctl's sentence"
if command -v runsc > /dev/null; then
  mcp client.mjs gvisor -- sbx-mcp --profile untrusted
  id=$(mcp_info run_id)
  assert_eq "gvisor" "$(record_get "$id" .isolation)" "the run's record"
  assert_clean
else
  t_fail "runsc is not installed (scripts/install-deps.sh)"
fi

t_begin "two clients at once, and two calls in flight from one client"
mcp client.mjs concurrent -- sbx-mcp
assert_clean

t_begin "a client that vanishes mid-command (killed): its server ends, the sandbox and runs are stopped, records finished"
before=" $(records | tr '\n' ' ') "
node "$MCP_DIR/client.mjs" hold -- sbx-mcp > "$W/hold.out" 2>&1 &
cpid=$!
for _ in $(seq 300); do grep -q '^info ready' "$W/hold.out" && break; kill -0 "$cpid" 2>/dev/null || break; sleep 0.1; done
if ! grep -q '^info ready' "$W/hold.out"; then
  t_fail "the client did not get ready: $(head -c 600 "$W/hold.out")"
  kill -KILL "$cpid" 2>/dev/null
else
  T_OUT=$(cat "$W/hold.out")
  while IFS= read -r l; do _t_err "the client: ${l#not ok - }"; done < <(grep '^not ok' "$W/hold.out")
  sb=$(mcp_info sandbox_id) spid=$(mcp_info server_pid)
  assert_contains "$(sbxctl list --no-legend)" "$sb" "sbxctl list before the client goes"
  kill -KILL "$cpid"; wait "$cpid" 2>/dev/null
  for _ in $(seq 150); do kill -0 "$spid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$spid" 2>/dev/null && _t_err "sbx-mcp (pid $spid) still runs 15 s after its client was killed"
  sb_gone "$sb"
  assert_clean "after the client vanished"
  assert_eq "" "$(sbxctl list --no-legend 2>&1 | awk '$3 != "finished"')" "runs and sandboxes sbxctl list shows not finished"
  # the records written since the client started (the sandbox's and the run's) are complete
  new=()
  for r in $(records); do [[ $before == *" $r "* ]] || new+=("$r"); done
  assert_eq 2 "${#new[@]}" "records since the client started (its sandbox and its run)"
  assert_contains " ${new[*]} " " $sb.json " "the new records"
  [ "${#new[@]}" -gt 0 ] && records_complete "${new[@]}"
fi

t_begin "the MCP inspector's CLI: tools/list and tools/call of run"
mcp_inspector --cli sbx-mcp --method tools/list
assert_eq 0 "$T_RC" "mcp-inspector-cli tools/list exit status"
assert_eq "export list_files read_file run sandbox_create sandbox_exec sandbox_remove show_run write_file" \
  "$(printf '%s' "$T_OUT" | jq -r '[.tools[].name] | sort | join(" ")' 2>&1)" "the tools the inspector lists"
mcp_inspector --cli sbx-mcp --method tools/call --tool-name run --tool-arg 'argv=["echo","hello from the inspector"]'
assert_eq 0 "$T_RC" "mcp-inspector-cli tools/call exit status"
assert_eq "hello from the inspector
 0 success false" "$(printf '%s' "$T_OUT" | jq -r '.structuredContent | "\(.stdout) \(.exit_code) \(.stop_reason) \(.stdout_truncated)"' 2>&1)" \
  "the run's result through the inspector"
assert_contains "$(printf '%s' "$T_OUT" | jq -r '.content[0].text' 2>&1)" "exit 0 (success)" "the text content"
assert_clean

t_summary
