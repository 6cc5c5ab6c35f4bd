#!/usr/bin/env bash
# bench/lanes.sh - the benchmarks in both test lanes (docs/testbed.md), their figures side by side in one
# table. Each bench already compares its pair within one run (interleaved samples, ratios); this runs each
# bench in each lane:
#   native  a throw-away nspawn container on this machine's kernel (6.18 here) at its own speed, sbx's
#           testbed build installed (no memory, pids or cpu controller: those ceilings unenforced)
#   vm      the qemu VM: Debian 12's kernel (6.1) under emulation, every controller, the build installed
# and prints, per bench and figure, the native and the vm value. The speed targets are judged on the
# native figures; the vm ones show the same ratios under emulation.
#
#   bench/lanes.sh [--lanes "native vm"] [BENCH...]     (as root, from anywhere; builds what it needs)
#
# BENCH (default: all of them): sandbox-exec (exec vs a cold run), pool-run (a pooled run vs bwrap and a
# cold run), run-overhead (a cold run vs hardened systemd-run), egress-connect (TCP and UDP connect()
# with 10,000 rules), egress-run (start-up with a network, DNS through a run's resolver, bulk TCP),
# load-run (concurrent cold runs), unit-properties (a run's unit's start-up by group of properties),
# broker-latency, image-start, mcp-exec (sandbox_exec through sbx-mcp vs sbxctl exec), gvisor-tier (the
# same workloads under the kernel and the gVisor tier). One cannot run
# natively here, and says so in the table: image-start (this machine's kernel has no device-mapper, which
# dm-verity needs).
# Each bench's output: build/bench-lanes/LANE/BENCH.txt. Sizes: SBX_BENCH_SCALE=1 (default; a few minutes
# a lane), 2 doubles the samples. The clock: bench/spawn-time (bench/lib.sh); SBX_BENCH_CLOCK=bash for
# stamps around each command as bash starts it, as the figures before spawn-time were taken.
set -uo pipefail
# shellcheck source=scripts/common.sh
. "$(dirname "$0")/../scripts/common.sh"
cd "$REPO" || exit 1
LANES="native vm"
if [ "${1:-}" = --lanes ]; then LANES=$2; shift 2; fi
ALL="sandbox-exec pool-run run-overhead unit-properties egress-connect egress-run load-run broker-latency image-start mcp-exec gvisor-tier"
BENCHES=${*:-$ALL}
S=${SBX_BENCH_SCALE:-1}
OUT=$REPO/build/bench-lanes
[ "$(id -u)" = 0 ] || { echo "bench/lanes.sh: run as root" >&2; exit 2; }
for b in $BENCHES; do [[ " $ALL " = *" $b "* ]] || { echo "bench/lanes.sh: no bench '$b' ($ALL)" >&2; exit 2; }; done

# the arguments each bench gets in a lane (its samples; see its header)
args() {
  case $1 in
    sandbox-exec) echo "$((12 * S)) 2 2" ;;
    pool-run) echo "$((12 * S)) 2 2 1" ;;
    run-overhead) echo "$((10 * S))" ;;
    unit-properties) echo "$((15 * S))" ;;
    egress-connect) echo "--rounds $((9 * S)) --bulk-mb 64" ;;
    egress-run) echo "$((8 * S)) $((40 * S)) 64" ;;
    load-run) echo "1 '1 8 16'" ;;
    broker-latency) echo "$((20 * S)) 2" ;;
    image-start) echo "$((8 * S)) 2" ;;
    mcp-exec) echo "$((100 * S))" ;;
    gvisor-tier) if [ "$2" = vm ]; then echo "$((5 * S))"; else echo "$((15 * S))"; fi ;;   # runsc under emulation: seconds a sample
  esac
}
# why a bench does not run in a lane ("" when it does)
not_here() {
  case $1:$2 in
    native:image-start) echo "no device-mapper in this machine's kernel (dm-verity)" ;;
  esac
}

# The payload, run as root inside the lane's testbed: installs sbx (the build dir given), then each bench
# into $SBX_BENCH_OUT/NAME.txt.
mkdir -p "$OUT"
PAYLOAD=$OUT/payload.sh   # in the repo, which both testbeds see at its own path
trap 'rm -f "$PAYLOAD"' EXIT
cat > "$PAYLOAD" <<'EOP'
set -u
export SBX_TESTBED_QUIET=1 LC_ALL=C
bash "$SBX_REPO/tests/integration/payload.sh" --install-only "$SBX_BUILD" > "$SBX_BENCH_OUT/install.txt" 2>&1 ||
  { echo "bench: install failed"; cat "$SBX_BENCH_OUT/install.txt"; exit 1; }
systemctl stop sbx-gc.timer 2>/dev/null
for b in $SBX_BENCHES; do
  a=${b#*=} b=${b%%=*}; a=${a//,/ }
  echo "== $b $a"
  case $b in
    egress-connect)
      mkdir -p /sys/fs/cgroup/sbx-bench.slice
      eval "\"$SBX_BUILD/bench/egress-connect\" $a /sys/fs/cgroup/sbx-bench.slice" > "$SBX_BENCH_OUT/$b.txt" 2>&1
      rc=$?; rmdir /sys/fs/cgroup/sbx-bench.slice 2>/dev/null ;;
    *) eval "bash \"$SBX_REPO/bench/$b.sh\" $a" > "$SBX_BENCH_OUT/$b.txt" 2>&1; rc=$? ;;
  esac
  echo "exit $rc" >> "$SBX_BENCH_OUT/$b.txt"
  grep '^BENCH ' "$SBX_BENCH_OUT/$b.txt" | head -n 40
done
EOP

run_lane() {   # LANE: builds, boots, runs the payload; output in $OUT/LANE
  local lane=$1 list="" a b why rc
  rm -rf "${OUT:?}/$lane"; mkdir -p "$OUT/$lane"
  for b in $BENCHES; do
    why=$(not_here "$lane" "$b")
    if [ -n "$why" ]; then echo "n/a: $why" > "$OUT/$lane/$b.txt"; continue; fi
    a=$(args "$b" "$lane"); list+=" $b=${a// /,}"
  done
  # one variable: "BENCH=ARGS ...", the arguments' spaces as commas
  export SBX_BENCHES=${list# } SBX_BENCH_OUT=$OUT/$lane SBX_REPO=$REPO
  case $lane in
    native)
      build_testbed > "$OUT/native/build.txt" 2>&1 || { echo "bench/lanes.sh: the testbed build failed"; return 1; }
      SBX_TESTBED_KIND=nspawn BUILD=$BUILD_TESTBED SBX_PASS_ENV="SBX_BENCHES SBX_BENCH_OUT SBX_REPO SBX_BENCH_CLOCK" \
        run_payload "$PAYLOAD" 3600
      rc=$? ;;
    vm)
      build > "$OUT/vm/build.txt" 2>&1 || { echo "bench/lanes.sh: the build failed"; return 1; }
      testbed/vm.sh setup > "$OUT/vm/setup.txt" 2>&1 || { echo "bench/lanes.sh: testbed/vm.sh setup failed"; return 1; }
      SBX_TESTBED_KIND=vm SBX_PASS_ENV="SBX_BENCHES SBX_BENCH_OUT SBX_REPO SBX_BENCH_CLOCK" run_payload "$PAYLOAD" 3600
      rc=$? ;;
  esac
  return "$rc"
}

# the lanes one after the other: both at once would measure each other
for lane in $LANES; do
  say "benchmarks: $lane lane"
  run_lane "$lane" || echo "bench/lanes.sh: the $lane lane failed (its files: $OUT/$lane)"
done

# the table: BENCH key value lines of each lane, joined on bench and key
say "benchmarks side by side (native: kernel $(uname -r), no resource controllers, at the machine's speed; vm: Debian 12's kernel under TCG emulation)"
printf '%-15s %-42s %-22s %s\n' bench figure native vm
for b in $BENCHES; do
  keys=$(for lane in $LANES; do sed -n 's/^BENCH \([^ ]*\) .*/\1/p' "$OUT/$lane/$b.txt" 2>/dev/null; done | awk '!seen[$0]++')
  if [ -z "$keys" ]; then
    row=()
    for lane in native vm; do row+=("$(head -c 60 "$OUT/$lane/$b.txt" 2>/dev/null | head -n 1 || echo -)"); done
    printf '%-15s %-42s %-22s %s\n' "$b" "(no figures)" "${row[0]:--}" "${row[1]:--}"
    continue
  fi
  for k in $keys; do
    row=()
    for lane in native vm; do
      v=$(sed -n "s/^BENCH $k \\([^ ]*\\).*/\\1/p" "$OUT/$lane/$b.txt" 2>/dev/null | head -n 1)
      [ -n "$v" ] || v=$(grep -q '^n/a: ' "$OUT/$lane/$b.txt" 2>/dev/null && echo "n/a" || echo "-")
      row+=("$v")
    done
    printf '%-15s %-42s %-22s %s\n' "$b" "$k" "${row[0]}" "${row[1]}"
  done
done
for lane in $LANES; do
  for b in $BENCHES; do
    grep -q '^n/a: ' "$OUT/$lane/$b.txt" 2>/dev/null && echo "  $lane, $b: $(sed 's/^n\/a: //' "$OUT/$lane/$b.txt")"
  done
done
exit 0
