#!/usr/bin/env bash
# tests/libraries/needed-libraries.sh BUILD_DIR static-front|dynamic-front: every program the build installs records (DT_NEEDED, as
# readelf -d shows it) exactly the libraries it is expected to use, no more and no fewer. Each is linked
# with --as-needed (b_asneeded), the NSS module too; a library a program only sometimes needs is loaded when it does (sbxctl,
# sbx-mcp and the generator resolve syscall names through libseccomp, loaded on first use:
# src/profile/syscall-name.c); the programs that only notify systemd and log to the journal speak those
# protocols themselves (src/shared/sd-protocols.c), without libsystemd. A new program, or a new library
# of one, is added here on purpose. The sbxctl front, where meson linked it statically (-Dstatic-front,
# meson.build), needs none and has no program interpreter: it must start without the dynamic loader.
set -uo pipefail
build=$1 front=${2:-dynamic-front}
# install name -> libraries, without their soname versions
declare -A want=(
  [sbxd]="libbpf libc libjson-c libresolv libseccomp libsystemd"
  [sbxctl]="libc libjson-c"   # the front: a run on sbxd's own socket without libsystemd (sbxctl/front.c)
  [sbxctl-bus]="libc libjson-c libsystemd"
  [sbx-exec]="libc libjson-c libseccomp"
  [sbx-mcp]="libc libcrypto libjson-c libsystemd"
  [sbx-generator]="libc libjson-c"
  [sbx-broker]="libc libcurl libjson-c libsystemd"
  [sbx-fetch]="libc libjson-c"
  [sbx-export]="libarchive libc libjson-c libmagic"
  [libnss_sbx.so.2]="libc"   # loaded into every program of a run: libc only
)
[ "$front" = static-front ] && want[sbxctl]=
fail=0 n=0
while read -r src dest; do
  [ "$(head -c 4 "$src" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ] || continue
  name=${dest##*/} n=$((n + 1))
  got=$(readelf -d "$src" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sed 's/\.so\(\.[0-9.]*\)\?$//' | sort | tr '\n' ' ')
  got=${got% }
  if [ -z "${want[$name]+x}" ]; then
    echo "FAIL $name ($dest): not in the expected list; it needs: $got"; fail=1
  elif [ "$got" != "${want[$name]}" ]; then
    echo "FAIL $name: needs '$got', expected '${want[$name]}'"; fail=1
  elif [ "$name" = sbxctl ] && [ "$front" = static-front ] && readelf -l "$src" | grep -q 'INTERP'; then
    echo "FAIL $name: linked statically, yet it names a program interpreter (the dynamic loader)"; fail=1
  else
    echo "ok $name: ${got:-no library (linked statically)}"
  fi
done < <(meson introspect --installed "$build" | python3 -c 'import json, sys
for k, v in json.load(sys.stdin).items(): print(k, v)')
[ "$n" -gt 0 ] || { echo "FAIL no installed program found in $build"; exit 1; }
for name in "${!want[@]}"; do
  meson introspect --installed "$build" | grep -q "/$name\"" || { echo "FAIL $name: expected, not installed"; fail=1; }
done
exit "$fail"
