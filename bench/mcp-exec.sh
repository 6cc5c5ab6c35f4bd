#!/usr/bin/env bash
# bench/mcp-exec.sh - a command in a sandbox through sbx-mcp (MCP over stdio) against `sbxctl exec`,
# measured side by side.
#
# Runs INSIDE a systemd testbed (or on a systemd host) as root, with sbx (and sbx-mcp) installed and the
# MCP clients' packages in tests/mcp (scripts/install-deps.sh). Interleaves, N times:
#   A  sbxctl exec SANDBOX -- /bin/true                     (a sandbox made by sbxctl create --detach)
#   B  tools/call sandbox_exec {argv: ["/bin/true"]}         (one long-lived MCP client, the MCP SDK's,
#                                                            sequential calls; a sandbox made by sbx-mcp)
# and reports p50 and p99 of each and the ratio of the medians B/A (target <= 1.10). Prints one
# "BENCH key value" line per figure for scripts.
#   bench/mcp-exec.sh [N]      (default 200)
# The samples are timed in the client (tests/mcp/bench-exec.mjs, node's monotonic clock), both sides
# alike: A includes starting sbxctl, as an agent that runs sbxctl per command pays it.
set -uo pipefail
N=${1:-200}
export LC_ALL=C SYSTEMD_COLORS=0
MCP_DIR=$(cd "$(dirname "$0")/../tests/mcp" && pwd)

[ -d /run/systemd/system ] || { echo "bench: systemd is not PID 1 here; run inside testbed/vm.sh" >&2; exit 2; }
for c in sbxctl sbx-mcp node; do command -v $c >/dev/null || { echo "bench: $c is not installed" >&2; exit 2; }; done
[ -d "$MCP_DIR/node_modules/@modelcontextprotocol/sdk" ] ||
  { echo "bench: the MCP clients' packages are not installed in $MCP_DIR (scripts/install-deps.sh)" >&2; exit 2; }

SB=$(sbxctl create --detach --name sbx-bench-mcp-ctl) || { echo "bench: cannot create a sandbox" >&2; exit 1; }
D=$(mktemp -d)
trap 'sbxctl rm "$SB" >/dev/null 2>&1; rm -rf "$D"' EXIT

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
node "$MCP_DIR/bench-exec.mjs" "$N" "$SB" -- sbx-mcp > "$D/samples" || { echo "bench: the MCP client failed" >&2; exit 1; }
mapfile -t A < <(sed -n 's/^sbxctl //p' "$D/samples")
mapfile -t B < <(sed -n 's/^mcp //p' "$D/samples")
[ "${#A[@]}" = "$N" ] && [ "${#B[@]}" = "$N" ] || { echo "bench: ${#A[@]} and ${#B[@]} samples, expected $N" >&2; exit 1; }
a50=$(pct 50 "${A[@]}"); a99=$(pct 99 "${A[@]}"); b50=$(pct 50 "${B[@]}"); b99=$(pct 99 "${B[@]}")
ratio=$(echo "scale=3; $b50 / $a50" | bc)

echo "sbx-mcp sandbox_exec (kernel $(uname -r), $(systemd-detect-virt 2>/dev/null || echo bare metal)); $N interleaved rounds"
printf '  A sbxctl exec       -- /bin/true   p50 %8.1f ms   p99 %8.1f ms\n' "$a50" "$a99"
printf '  B mcp sandbox_exec  -- /bin/true   p50 %8.1f ms   p99 %8.1f ms   B/A %.3f (target <= 1.10)\n' "$b50" "$b99" "$ratio"
echo "BENCH p50_ms_sbxctl_exec $a50"
echo "BENCH p99_ms_sbxctl_exec $a99"
echo "BENCH p50_ms_mcp_exec $b50"
echo "BENCH p99_ms_mcp_exec $b99"
echo "BENCH ratio_mcp_vs_sbxctl_exec $ratio"
