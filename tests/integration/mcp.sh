# tests/integration/mcp.sh - helpers for the tests of sbx-mcp (test-67-mcp.sh, test-68-mcp-limits.sh):
# real MCP clients (the MCP SDK's, tests/mcp/client.mjs and raw.mjs; the inspector's CLI) drive the
# installed sbx-mcp. Sourced after lib.sh and sbx.sh.
# shellcheck shell=bash

MCP_DIR=$(cd "$(dirname "$0")/../mcp" && pwd)
MCP_NODE_MIN=20

# mcp_require_clients: node is new enough and the clients' packages are installed (scripts/install-deps.sh
# runs npm ci in tests/mcp); else the case fails saying why
mcp_require_clients() {
  if ! command -v node > /dev/null 2>&1; then
    t_fail "node is not installed (scripts/install-deps.sh)"; return 1
  fi
  local v; v=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null)
  if ! [ "${v:-0}" -ge "$MCP_NODE_MIN" ] 2>/dev/null; then
    t_fail "node $(node --version 2>&1) is older than $MCP_NODE_MIN, which the MCP clients need"; return 1
  fi
  if [ ! -d "$MCP_DIR/node_modules/@modelcontextprotocol/sdk" ]; then
    t_fail "the MCP clients' packages are not installed in $MCP_DIR (scripts/install-deps.sh runs npm ci there)"; return 1
  fi
  return 0
}
# mcp_require_server: sbx-mcp is installed (else the case is skipped: this build has none)
mcp_require_server() {
  command -v sbx-mcp > /dev/null 2>&1 && return 0
  t_skip "sbx-mcp is not installed by this build"; return 1
}

# mcp SCRIPT ARGS... [-- SERVER-COMMAND...]: runs tests/mcp/SCRIPT under node (sets T_OUT, T_RC); each
# "not ok" line it prints is a failed check of the open case, its "#" lines are logged; the script must
# exit 0 and pass at least one check
mcp() {
  local script=$1 line n=0; shift
  t_run timeout -k 5 600 node "$MCP_DIR/$script" "$@"
  while IFS= read -r line; do
    case $line in
      "ok - "*) n=$((n + 1)) ;;
      "not ok - "*) _t_err "${line#not ok - }" ;;
      "# "*) t_log "${line#\# }" ;;
    esac
  done <<< "$T_OUT"
  [ "$n" -gt 0 ] || _t_err "$script $*: no check passed; output: $(printf '%s' "$T_OUT" | head -c 600)"
  [ "$T_RC" = 0 ] || _t_err "$script $*: exit status $T_RC"
}

# mcp_info KEY: the value of the script's last "info KEY VALUE" line
mcp_info() { printf '%s\n' "$T_OUT" | sed -n "s/^info $1 //p" | tail -n 1; }

# mcp_inspector ARGS...: the MCP inspector's CLI (sets T_OUT to its stdout, T_RC; its stderr is logged
# when it fails). It runs from its own build folder: version 1.0.3 looks for its package.json at
# ../package.json of the current directory before importing it relative to itself.
mcp_inspector() {
  local err
  err=$(mktemp)
  T_OUT=$(cd "$MCP_DIR/node_modules/@modelcontextprotocol/inspector-cli/build" &&
          timeout -k 5 120 "$MCP_DIR/node_modules/.bin/mcp-inspector-cli" "$@" 2> "$err"); T_RC=$?
  [ "$T_RC" = 0 ] || t_log "mcp-inspector-cli $*: exit status $T_RC; stderr: $(tr '\n' ' ' < "$err" | head -c 600)"
  rm -f "$err"
}
