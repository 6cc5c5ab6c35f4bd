#!/usr/bin/env bash
# Unit test of the bash completion of sbxctl (no root, no sbxd): sources it with a fake sbxctl
# (fake-sbxctl, a fixture in sbxctl's listing format) first on PATH and checks what it offers for
# each kind of word.
#
#   test-completion.sh COMPLETION_FILE bash-completion|plain
#
# bash-completion: with bash-completion's helpers loaded (_init_completion, _filedir,
# _command_offset), as in an interactive shell on Debian; plain: without them.
# Exit status: 0 every check passed, 1 one failed, 77 (skipped) bash-completion is not installed.
set -uo pipefail
export LC_ALL=C

COMPLETION=${1:?usage: test-completion.sh COMPLETION_FILE bash-completion|plain}
MODE=${2:?usage: test-completion.sh COMPLETION_FILE bash-completion|plain}
HERE=$(cd "$(dirname "$0")" && pwd)
COMPLETION=$(cd "$(dirname "$COMPLETION")" && pwd)/${COMPLETION##*/}
BASH_COMPLETION=${SBX_BASH_COMPLETION:-/usr/share/bash-completion/bash_completion}

case $MODE in
  bash-completion)
    if [ ! -r "$BASH_COMPLETION" ]; then
      echo "SKIP: $BASH_COMPLETION not found (the bash-completion package is not installed)"
      exit 77
    fi
    # shellcheck source=/dev/null
    . "$BASH_COMPLETION"
    declare -F _init_completion > /dev/null || { echo "FAIL: $BASH_COMPLETION defines no _init_completion"; exit 1; }
    ;;
  plain)
    ;;
  *)
    echo "usage: test-completion.sh COMPLETION_FILE bash-completion|plain" >&2
    exit 2
    ;;
esac

T=$(mktemp -d "${TMPDIR:-/tmp}/sbx-completion.XXXXXX")
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/bin" "$T/work/a" "$T/work/b" "$T/work/sub"
ln -s "$HERE/fake-sbxctl" "$T/bin/sbxctl"
ln -s "$HERE/fake-machinectl" "$T/bin/machinectl"
touch "$T/work/f" "$T/work/x.json" "$T/work/y.txt"
export PATH="$T/bin:$PATH"
cd "$T/work" || exit 1

# shellcheck source=tests/completion/complete.sh
. "$HERE/complete.sh"
# shellcheck source=shell-completion/bash/sbxctl
. "$COMPLETION"

FAILED=0 N=0
fail() { echo "FAIL: $*"; FAILED=1; }

# expect LINE WANT: the completion of LINE is exactly WANT (sorted, space-separated), and nothing
# reached stderr
expect() {
  local line=$1 want=$2 got
  N=$((N + 1))
  sbx_complete _sbxctl "$line" 2> "$T/stderr"
  got=$(sbx_reply)
  if [ "$got" != "$want" ]; then
    fail "'$line<TAB>': expected '$want', got '$got'"
  elif [ -s "$T/stderr" ]; then
    fail "'$line<TAB>': wrote to stderr: $(head -c 300 "$T/stderr")"
  else
    echo "ok '$line<TAB>' -> '$got'"
  fi
}

# expect_has LINE WORD / expect_not LINE WORD: WORD is / is not among the completions of LINE
expect_has() {
  local line=$1 word=$2 got
  N=$((N + 1))
  sbx_complete _sbxctl "$line" 2> "$T/stderr"
  got=" $(sbx_reply) "
  case $got in
    *" $word "*) echo "ok '$line<TAB>' offers '$word'" ;;
    *) fail "'$line<TAB>': '$word' is not offered; got '$(head -c 300 <<< "$got")'" ;;
  esac
  [ -s "$T/stderr" ] && fail "'$line<TAB>': wrote to stderr: $(head -c 300 "$T/stderr")"
  return 0
}
expect_not() {
  local line=$1 word=$2 got
  N=$((N + 1))
  sbx_complete _sbxctl "$line" 2> "$T/stderr"
  got=" $(sbx_reply) "
  case $got in
    *" $word "*) fail "'$line<TAB>': '$word' is offered, but must not be" ;;
    *) echo "ok '$line<TAB>' does not offer '$word'" ;;
  esac
  return 0
}

RUNS="0f0e0d0c0b0a09080706050403020100 5c0f9a8b7c6d5e4f3a2b1c0d9e8f7a61 a1b2c3d4e5f60718293a4b5c6d7e8f90 b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0 c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0 d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0"
PROFILES="browser coding data offline"

echo "# mode: $MODE"
complete -p sbxctl | grep -q -- '-F _sbxctl sbxctl$' || fail "the completion is not registered for sbxctl: $(complete -p sbxctl 2>&1)"

# commands and subcommands
expect "sbxctl " "capture create exec list profile rm run secret show stop"
expect "sbxctl s" "secret show stop"
expect "sbxctl --json " "capture create exec list profile rm run secret show stop"
expect "sbxctl profile " "check list reload show"
expect "sbxctl profile --no-legend " "check list reload show"
expect "sbxctl profile re" "reload"
expect "sbxctl profile list " ""
expect "sbxctl secret " "add list rm"
expect "sbxctl secret rm " "atok tok"
expect "sbxctl secret add --r" "--replace"
expect "sbxctl list " ""

# options; one that wants "=VALUE" is completed without a space after it
expect "sbxctl run --ti" "--timeout="
expect "sbxctl run --env" "--env-file="
case " ${SBX_COMPOPT[*]} " in
  *" -o nospace "*) echo "ok '--ti<TAB>' asks for no space after '--timeout='" ;;
  *) fail "'sbxctl run --ti<TAB>': no 'compopt -o nospace' after '--timeout=' (asked: '${SBX_COMPOPT[*]}')" ;;
esac
expect "sbxctl run --no-t" "--no-tty"
expect "sbxctl --vers" "--version"
case " ${SBX_COMPOPT[*]} " in
  *" -o nospace "*) fail "'sbxctl --vers<TAB>': 'compopt -o nospace' after '--version', which takes no value" ;;
  *) echo "ok '--vers<TAB>' leaves the space after '--version'" ;;
esac
expect "sbxctl --no-l" "--no-legend"
expect "sbxctl list --" "--all --help --json --no-legend"
expect "sbxctl show --" "--help --json"
expect_has "sbxctl --" "--version"
expect_has "sbxctl --" "--profile="
expect_has "sbxctl run --" "--"
expect_not "sbxctl run --" "--json"

# profile names: the valid ones for a run, all of them for "profile show"
expect "sbxctl run --profile " "$PROFILES"
expect "sbxctl run -p " "$PROFILES"
expect "sbxctl -p " "$PROFILES"
expect "sbxctl run --profile=" "$PROFILES"
expect "sbxctl run --profile=co" "coding"
expect "sbxctl profile show " "broken $PROFILES"
expect "sbxctl profile show of" "offline"
expect "sbxctl profile show offline " ""

# run ids: all for show, the running ones for stop
expect "sbxctl show " "$RUNS"
expect "sbxctl show 5c" "5c0f9a8b7c6d5e4f3a2b1c0d9e8f7a61"
expect "sbxctl show --json " "$RUNS"
expect "sbxctl --json show " "$RUNS"
expect "sbxctl stop " "a1b2c3d4e5f60718293a4b5c6d7e8f90 b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0 c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0"
# capture: the running ones too, then its options (no value offered for --until)
expect "sbxctl capture " "a1b2c3d4e5f60718293a4b5c6d7e8f90 b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0 c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0"
expect "sbxctl capture a1b2c3d4e5f60718293a4b5c6d7e8f90 --" "--help --json --until="
expect "sbxctl capture --until " ""

# sandboxes: the running ones, by id and name, for exec and rm; exec's command after "--"
expect "sbxctl exec " "b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0 build c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0"
expect "sbxctl rm " "b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0 build c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0"
expect "sbxctl exec bu" "build"
expect "sbxctl exec build --ti" "--timeout="
expect_has "sbxctl exec build -" "--"
expect_has "sbxctl exec build -- ech" "echo"
expect_has "sbxctl exec --timeout 5s build -- ech" "echo"
expect "sbxctl create --de" "--detach"
expect "sbxctl create --idle-timeout " ""
expect "sbxctl show a1b2c3d4e5f60718293a4b5c6d7e8f90 " ""

# option values
expect "sbxctl run --network " "none"
expect "sbxctl run --network=" "none"
expect "sbxctl run -p data --network " "none"
expect "sbxctl run --memory " ""
expect "sbxctl run --timeout=" ""
expect "sbxctl run --workspace " "a b sub"
expect "sbxctl run -w s" "sub"
expect "sbxctl run --dataset=" "a b sub"

# files
expect "sbxctl profile check " "a b sub x.json"
expect "sbxctl profile check x.json s" "sub"
expect "sbxctl profile show ./" "./a ./b ./sub ./x.json"

# the command of a run, and its arguments, are not sbxctl's
expect_has "sbxctl run -- ech" "echo"
expect_has "sbxctl run ech" "echo"
expect_has "sbxctl run -p coding --timeout=5s -- ech" "echo"
expect_not "sbxctl run -- ls --pro" "--profile="
expect_not "sbxctl run -p coding ls " "$(echo "$PROFILES" | cut -d' ' -f1)"

# other machines: -M offers the running containers, and the run ids and sandboxes are the container's;
# -H offers host names but no run ids or sandboxes (asking HOST would run ssh); profile names are local
expect_has "sbxctl --" "--host="
expect_has "sbxctl --" "--machine="
expect "sbxctl --ma" "--machine="
expect "sbxctl -M " "box"
expect "sbxctl --machine=" "box"
expect "sbxctl --machine b" "box"
expect "sbxctl -M box " "capture create exec list profile rm run secret show stop"
expect "sbxctl -M box show " "e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0 f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0"
expect "sbxctl --machine=box stop " "e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0 f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0"
expect "sbxctl -M box exec " "f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0 inbox"
expect "sbxctl rm -M box " "f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0 inbox"
expect "sbxctl -M gone show " ""
expect "sbxctl -H build3 " "capture create exec list profile rm run secret show stop"
expect "sbxctl -H build3 show " ""
expect "sbxctl --host=build3 stop " ""
expect "sbxctl -H build3 exec " ""
expect "sbxctl rm -H root@build3 " ""
expect "sbxctl -H build3 run --profile " "$PROFILES"
expect_has "sbxctl -H build3 exec sb -- ech" "echo"
expect_not "sbxctl -H " "--json"
printf '127.0.0.1 sbxhost-one\n127.0.0.2 sbxhost-two\n' > "$T/hosts"
HOSTFILE=$T/hosts
expect_has "sbxctl -H sbxhost-" "sbxhost-one"
expect_has "sbxctl --host=ci@sbxhost-t" "ci@sbxhost-two"
expect_has "sbxctl list -H sbxhost-" "sbxhost-two"

# sbxd not reachable: no run ids, and nothing on the terminal
export FAKE_SBXCTL_DOWN=1
expect "sbxctl show " ""
expect "sbxctl stop " ""
unset FAKE_SBXCTL_DOWN

# sbxctl not found (the completion runs the command as typed): nothing on the terminal either
expect "no-such-sbxctl run --profile " ""

echo "$N checks, mode $MODE: $([ "$FAILED" = 0 ] && echo "all passed" || echo "some FAILED")"
exit "$FAILED"
