#!/usr/bin/env bash
# sbx-mcp (docs/mcp.md) and a ceiling that needs the memory controller: a run over the memory it asked
# for is stopped, and its result carries sbx's limit line among agent_lines, as sbxctl would print it.
# The MCP SDK's client drives the server (tests/mcp/client.mjs). The rest of sbx-mcp: test-67-mcp.sh.
# lane: vm
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
. "$(dirname "$0")/mcp.sh"
t_require_systemd || t_summary

t_begin "setup: sbx-mcp, node and the MCP clients"
mcp_require_clients && mcp_require_server || t_summary

t_begin "memory: a run over the ceiling it asked for ends as memory; agent_lines has the limit line"
if t_require_controller memory; then
  mcp client.mjs memory 64M -- sbx-mcp --memory-max 1G
  id=$(mcp_info run_id)
  assert_eq "oom-kill $((64 << 20))" "$(record_get "$id" '"\(.stop_reason) \(.limits.memory_bytes)"')" "the run's record"
  assert_clean
fi

t_summary
