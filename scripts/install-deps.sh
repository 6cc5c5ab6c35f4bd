#!/usr/bin/env bash
# install-deps.sh - install everything sbx needs to build, unit-test and run its testbeds.
# Run as root on Debian 12. Idempotent: when every package is already installed it only runs one
# dpkg-query (well under a second) and exits 0.
#
#   scripts/install-deps.sh            install what is missing
#   scripts/install-deps.sh --check    exit 1 (listing them) if packages are missing; install nothing
#
# The kernel the VM testbed boots is not installed here: testbed/vm.sh setup downloads and unpacks it
# into its cache without installing it.
set -euo pipefail

PKGS=(
  # build
  meson ninja-build pkg-config gcc libc6-dev clang llvm
  libsystemd-dev libbpf-dev bpftool libseccomp-dev libjson-c-dev libssl-dev libcurl4-openssl-dev
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
  make git nodejs tar xz-utils bzip2 zip unzip strace gdb
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

# (no process substitution: it needs /dev/fd, absent in a bare chroot)
read -ra MISSING <<< "$(missing | tr '\n' ' ')"
if [ "${#MISSING[@]}" -eq 0 ]; then
  echo "install-deps: all ${#PKGS[@]} packages present"
  exit 0
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
