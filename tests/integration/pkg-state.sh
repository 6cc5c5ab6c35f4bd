#!/usr/bin/env bash
# tests/integration/pkg-state.sh - print the parts of the system state that installing, upgrading and
# removing the sbx package may change, one sorted line per item. The payload saves it before the package
# is installed; test-90 compares it after the package is purged: anything left behind (a file, a unit,
# a user, a cgroup, a process, a bus name, catalog entries) is a difference.
set -uo pipefail
export LC_ALL=C

{
  # files: everywhere a package puts things, and where sbx keeps state
  find /etc /lib/systemd /usr/lib/systemd /usr/lib/sbx /usr/lib/tmpfiles.d /usr/libexec \
       /usr/share/dbus-1 /usr/share/bash-completion /usr/share/lintian \
       /var/lib/systemd/deb-systemd-helper-enabled /var/lib/systemd/deb-systemd-helper-masked \
       -xdev -printf 'file %p\n' 2>/dev/null
  # directories systemd makes on first use and keeps (empty): only what is in them
  find /var/lib/private /run/systemd/generator /run/systemd/generator.early /run/systemd/generator.late \
       /run/systemd/transient /run/systemd/system -mindepth 1 -xdev -printf 'file %p\n' 2>/dev/null
  find /usr/bin /usr/share/doc /usr/share/man/man1 /usr/share/man/man5 /usr/share/man/man8 \
       -mindepth 1 -maxdepth 1 -printf 'file %p\n' 2>/dev/null
  # /run and /var/lib change as the system runs (other services come and go): sbx's names only
  find /var/lib /run -mindepth 1 -maxdepth 2 -name '*sbx*' ! -name 'sbx-test-out.*' -printf 'file %p\n' 2>/dev/null
  find /var/lib/dpkg/info -maxdepth 1 -name 'sbx*' -printf 'file %p\n' 2>/dev/null
  find /sys/fs/cgroup -maxdepth 4 -name '*sbx*' -printf 'cgroup %p\n' 2>/dev/null
  # users and groups (a static user, or a dynamic one left registered)
  for f in /etc/passwd /etc/group /etc/shadow /etc/gshadow; do echo "users $f $(md5sum < "$f" | cut -c1-32)"; done
  getent passwd | awk -F: 'tolower($1) ~ /sbx/ {print "user " $1}'
  # units systemd knows (loaded or as files), bus names (running or activatable), processes
  systemctl list-units --all --plain --no-legend 'sbx*' 2>/dev/null | awk '{print "unit " $1}'
  systemctl list-unit-files --no-legend 'sbx*' 2>/dev/null | awk '{print "unit-file " $1}'
  busctl --system --acquired --activatable list --no-legend 2>/dev/null | awk '$1 ~ /sbx/ {print "bus " $1}'
  ps -eo args= | awk '/\/libexec\/sbx\// && !/awk/ {print "process " $0}'
  # journal catalog entries
  journalctl --list-catalog 2>/dev/null | awk '$2 == "sbx:" {print "catalog " $1}'
} | sort -u
