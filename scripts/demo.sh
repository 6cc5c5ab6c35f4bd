#!/usr/bin/env bash
# scripts/demo.sh - THE demo (run as root, works from a clean clone): installs the dependencies,
# builds, boots the systemd testbed (testbed/vm.sh; or uses this machine directly when its PID 1 is
# systemd; SBX_TESTBED_KIND=vm|nspawn|host chooses), installs sbx there and shows:
#   sbxctl run -- sh -c 'id; echo hello from the sandbox'
#   sbxctl show --json <that run>
# Exit status: 0 if both worked.
set -uo pipefail
# shellcheck source=scripts/common.sh
. "$(dirname "$0")/common.sh"
cd "$REPO" || exit 1
T0=$(now)

say "dependencies"
scripts/install-deps.sh || { echo "demo: dependency install failed"; exit 1; }
say "build"
build || { echo "demo: build failed"; exit 1; }
if [ "$(testbed_kind)" = vm ]; then
  say "testbed"
  testbed/vm.sh setup || { echo "demo: VM testbed setup failed"; exit 1; }
fi

PAYLOAD=$(mktemp /tmp/sbx-demo.XXXXXX)
trap 'rm -f "$PAYLOAD"' EXIT
cat > "$PAYLOAD" <<'EOP'
# the demo, run as root with systemd as PID 1
bash "$SBX_REPO/tests/integration/payload.sh" --install-only "$SBX_BUILD" > /tmp/sbx-demo-install.log 2>&1 \
  || { cat /tmp/sbx-demo-install.log; echo "demo: install failed"; exit 1; }
cd /tmp
echo "\$ sbxctl run -- sh -c 'id; echo hello from the sandbox'"
sbxctl run -- sh -c 'id; echo hello from the sandbox'
rc=$?
echo "(sbxctl run exit status: $rc)"
echo
echo "\$ sbxctl list"
list=$(sbxctl list 2>&1); lrc=$?
printf '%s\n' "$list"
# one run per line, id first, newest last; fall back to the last 32-hex-digit word
id=$(printf '%s\n' "$list" | awk 'NF {last = $1} END {print last}')
printf '%s' "$id" | grep -Eqx '[0-9a-f]{32}' || id=$(printf '%s\n' "$list" | grep -oE '\b[0-9a-f]{32}\b' | tail -n 1)
[ "$lrc" = 0 ] && [ -n "$id" ] || { echo "demo: no run id from 'sbxctl list' (exit status $lrc)"; exit 1; }
echo
echo "\$ sbxctl show --json $id"
json=$(sbxctl show --json "$id"); src=$?
printf '%s\n' "$json" | jq . 2>/dev/null || printf '%s\n' "$json"
[ "$rc" = 0 ] && [ "$src" = 0 ]
EOP

say "demo"
export SBX_REPO=$REPO
SBX_PASS_ENV=SBX_REPO run_payload "$PAYLOAD" 1200; rc=$?
echo
echo "demo: $([ "$rc" = 0 ] && echo ok || echo "FAILED (exit status $rc)") in $(secs "$T0")s"
exit "$rc"
