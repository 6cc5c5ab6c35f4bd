#!/usr/bin/env bash
# tests/integration/check-lanes.sh DIR - every integration test file of DIR is in a lane (docs/testbed.md):
# exactly one line "# lane: native", "# lane: vm" or "# lane: both"; and no file of the native lane asks for
# a cgroup controller (t_require_controller), which that lane does not have. Run by meson test (no root,
# no testbed). Prints the files per lane; exit status 1 if a file is in none, in two, or asks for what
# its lane lacks.
set -uo pipefail
DIR=${1:-$(dirname "$0")}
rc=0 native=0 vm=0 both=0
for f in "$DIR"/test-*.sh; do
  name=${f##*/}
  mapfile -t lanes < <(grep -E '^# lane:' "$f")
  if [ "${#lanes[@]}" != 1 ]; then
    echo "FAIL $name: ${#lanes[@]} '# lane:' lines, expected exactly one"; rc=1; continue
  fi
  case ${lanes[0]} in
    "# lane: native") native=$((native + 1))
      if grep -nE '^[^#]*\bt_require_controller\b' "$f" | head -n 3 | grep .; then
        echo "FAIL $name: in the native lane, which has no cgroup controllers, but asks for one (above)"; rc=1
      fi ;;
    "# lane: vm") vm=$((vm + 1)) ;;
    "# lane: both") both=$((both + 1)) ;;
    *) echo "FAIL $name: '${lanes[0]}': the lane is native, vm or both"; rc=1 ;;
  esac
done
echo "lanes: $native file(s) native, $vm vm, $both both"
exit "$rc"
