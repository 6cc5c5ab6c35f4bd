#!/usr/bin/env bash
# install-deps.sh - install everything sbx needs to build, unit-test and run its testbeds.
# Run as root on Debian 12. Idempotent: when every package is already installed it only runs one
# dpkg-query and compares one checksum of tests/mcp's lock file (well under a second), and exits 0.
#
#   scripts/install-deps.sh            install what is missing
#   scripts/install-deps.sh --check    exit 1 (listing them) if packages (or tests/mcp's) are missing;
#                                      install nothing
#
# The kernel the VM testbed boots is not installed here: testbed/vm.sh setup downloads and unpacks it
# into its cache without installing it.
#
# Then the MCP clients of the tests and the bench (tests/mcp: the MCP SDK and the inspector's CLI, at the
# exact versions of its package-lock.json) with `npm ci`, under the first Node.js >= 20 found (the
# inspector's CLI needs it; Debian 12's own nodejs is 18): skipped when tests/mcp/node_modules was
# installed from the same lock file by the same Node.js major version.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
MCP_DIR=$REPO/tests/mcp
NODE_MIN=20

PKGS=(
  # build
  meson ninja-build pkg-config gcc libc6-dev clang llvm
  libsystemd-dev libbpf-dev bpftool libseccomp-dev libjson-c-dev libssl-dev libgcrypt20-dev
  libcurl4-openssl-dev
  # sbx-export: archives and file types
  libarchive-dev libmagic-dev
  # unit tests; the sanitizer build and the fuzzers (clang's ASan, UBSan and libFuzzer runtimes:
  # scripts/sanitize.sh, scripts/fuzz.sh), unit-test coverage (llvm-profdata, llvm-cov: scripts/coverage.sh)
  libcmocka-dev libclang-rt-dev
  # man pages (pandoc renders them; man checks them), shell completion
  pandoc man-db groff-base bash-completion
  # packages: the .deb (debhelper, checked with lintian) and the RPM (Debian's rpmbuild)
  dpkg-dev debhelper fakeroot lintian rpm
  # packaging/check-production.sh unpacks the RPM to look at its programs (rpm2cpio | cpio)
  cpio
  # what the testbeds boot and what the integration tests use inside them (the testbeds boot this
  # machine's own root, so everything the guest needs must be installed here)
  systemd systemd-container dbus libnss-systemd python3 iproute2 jq procps util-linux
  # record_get in the integration tests reads records with gojq (a static program: ~0.1 s a call under the
  # VM's emulation, where jq 1.6 takes ~0.45 s to compile its builtins; the tests fall back to jq)
  gojq
  # the credential tests' HTTPS servers: a test CA and certificates (tests/integration/test-57-credentials.sh)
  openssl
  # runs of network mode public and allowlist (slirp4netns connects their namespaces); the egress tests'
  # DNS server (tests/integration/testnet.sh)
  slirp4netns dnsmasq-base
  # examples/agent.py, the D-Bus client the integration suite runs (tests/integration/test-46-agent.sh)
  python3-dbus-next
  # sbxctl -H (sd-bus over ssh): the sshd that tests/integration/test-47-remote.sh starts on 127.0.0.1 for
  # its own use. The system's ssh service is neither started nor left enabled (see below)
  openssh-server
  # bench/pool-run.sh: the warm pool's runs measured against bubblewrap on the same machine
  bubblewrap
  # the compatibility suite (tests/integration/test-70-compat.sh): real toolchains run inside the
  # sandbox and outside, plus a subset of CPython's own regression tests
  libpython3.11-testsuite python3-venv python3-pip python3-setuptools python3-wheel
  # (nodejs: also the MCP test clients' runtime, at least version 20: see npm_deps below)
  make git nodejs tar xz-utils bzip2 zip unzip strace gdb
  # a terminal in a run (tests/integration/test-71-terminal.sh): a real terminal driven by tmux, and a
  # full-screen program in it
  tmux less
  # the gVisor tier (process.isolation "gvisor", docs/security.md; tests/integration/test-69-gvisor.sh,
  # the shipped profile untrusted in the adversarial and compatibility tests)
  runsc
  # base images (docs/images.md, tests/integration/test-59-images.sh): import and dm-verity data
  squashfs-tools cryptsetup-bin
  # VM testbed: emulator, initramfs, kernel module tools, timing
  qemu-system-x86 busybox-static kmod bc gzip
)

missing() {
  # dpkg-query prints nothing (and complains on stderr) for packages it has never heard of
  local have
  have=$(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${PKGS[@]}" 2>/dev/null | awk '$2 == "ii" {print $1}') || true
  local p
  for p in "${PKGS[@]}"; do
    grep -qxF -- "$p" <<<"$have" || echo "$p"
  done
}

# the first node on PATH or in the usual places whose major version is at least NODE_MIN
find_node() {
  local n v
  for n in "$(command -v node || true)" /usr/bin/node /usr/local/bin/node /usr/bin/nodejs; do
    [ -n "$n" ] && [ -x "$n" ] || continue
    v=$("$n" -p 'process.versions.node.split(".")[0]' 2>/dev/null) || continue
    [ "${v:-0}" -ge "$NODE_MIN" ] 2>/dev/null && { echo "$n"; return 0; }
  done
  return 1
}

# tests/mcp/node_modules from its lock file (CHECK=1: only say whether it is up to date)
npm_deps() {
  local check=${1:-0} node npm stamp want
  if ! node=$(find_node); then
    echo "install-deps: the MCP test clients (tests/mcp) need Node.js >= $NODE_MIN; found:" \
      "$(for n in node nodejs; do command -v "$n" >/dev/null && printf '%s %s ' "$(command -v "$n")" "$("$n" --version 2>&1)"; done)" \
      "(Debian 12's nodejs is 18: install a Node.js $NODE_MIN or later)" >&2
    return 1
  fi
  npm=$(dirname "$node")/npm
  [ -x "$npm" ] || npm=$(command -v npm) || { echo "install-deps: no npm beside $node" >&2; return 1; }
  stamp=$MCP_DIR/node_modules/.sbx-installed
  want="$(sha256sum < "$MCP_DIR/package-lock.json" | cut -d' ' -f1) node $("$node" -p 'process.versions.node.split(".")[0]')"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    echo "install-deps: tests/mcp packages present (node $("$node" --version))"
    return 0
  fi
  if [ "$check" = 1 ]; then
    echo "install-deps: tests/mcp packages missing or older than package-lock.json"
    return 1
  fi
  echo "install-deps: npm ci in tests/mcp (node $("$node" --version) from $node)"
  (cd "$MCP_DIR" && PATH="$(dirname "$node"):$PATH" "$npm" ci --no-audit --no-fund --loglevel=error) || {
    echo "install-deps: npm ci in $MCP_DIR failed" >&2; return 1; }
  echo "$want" > "$stamp"
}

# (no process substitution: it needs /dev/fd, absent in a bare chroot)
read -ra MISSING <<< "$(missing | tr '\n' ' ')"
if [ "${#MISSING[@]}" -eq 0 ]; then
  echo "install-deps: all ${#PKGS[@]} packages present"
  npm_deps "$([ "${1:-}" = --check ] && echo 1 || echo 0)"
  exit $?
fi
echo "install-deps: missing: ${MISSING[*]}"
[ "${1:-}" = --check ] && exit 1
if [ "$(id -u)" != 0 ]; then
  echo "install-deps: must run as root to install them" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
APT=(apt-get -o DPkg::Lock::Timeout=600 -q)
"${APT[@]}" update

# openssh-server's postinst starts sshd on port 22 (invoke-rc.d without systemd as PID 1, deb-systemd-invoke
# with it) and enables ssh.service. Both ask policy-rc.d first: one that says "no" (101) while it installs
# keeps sshd from starting, and the service is disabled afterwards. A policy-rc.d already there (a container
# image's) is left as it is.
POLICY=/usr/sbin/policy-rc.d OWN_POLICY=0 NEW_SSHD=0
case " ${MISSING[*]} " in *" openssh-server "*) NEW_SSHD=1 ;; esac
if [ "$NEW_SSHD" = 1 ] && [ ! -e "$POLICY" ]; then
  printf '#!/bin/sh\n# scripts/install-deps.sh: no service starts while it installs packages\nexit 101\n' > "$POLICY"
  chmod 755 "$POLICY"
  OWN_POLICY=1
  trap 'rm -f "$POLICY"' EXIT
fi
"${APT[@]}" install -y --no-install-recommends "${MISSING[@]}"
if [ "$OWN_POLICY" = 1 ]; then
  rm -f "$POLICY"
  trap - EXIT
fi
if [ "$NEW_SSHD" = 1 ]; then
  # its sysvinit links and (update-rc.d calls systemctl for it) ssh.service
  update-rc.d ssh disable >/dev/null 2>&1 || true
fi

read -ra STILL <<< "$(missing | tr '\n' ' ')"
if [ "${#STILL[@]}" -ne 0 ]; then
  echo "install-deps: still missing after apt-get install: ${STILL[*]}" >&2
  exit 1
fi
echo "install-deps: installed ${#MISSING[@]} package(s)"
npm_deps
