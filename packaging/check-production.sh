#!/usr/bin/env bash
# packaging/check-production.sh - checks that sbx's packaged programs are not a testbed build. A testbed
# build (meson -Dtestbed-unenforced-limits=true, docs/testbed.md) starts runs whose memory, task and CPU
# ceilings the host cannot enforce; a package must never be one. Each program of a testbed build carries
# the mark "testbed-unenforced-limits" (src/shared/ceilings.h: SBX_BUILD_KIND, what --version adds), so:
#   - no ELF file of the package may contain it, and
#   - sbxd, sbxctl, sbx-mcp and sbx-exec, run with --version, must print just their name and version.
#
#   packaging/check-production.sh PACKAGE|DIR...     (a .deb, an .rpm, or a tree of installed files)
#
# Prints one line per argument; exit status 0 only if every one is a production build, 1 if one is not
# (or cannot be read). packaging/deb/build.sh and packaging/rpm/build.sh run it on what they built;
# scripts/test.sh runs it on both packages, and on a testbed build to see it refused.
set -uo pipefail
MARK=testbed-unenforced-limits
[ "$#" -gt 0 ] || { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }

check() {   # NAME DIR: the files below DIR
  local name=$1 dir=$2 f bad=() progs=() out v
  while IFS= read -r -d '' f; do
    [ "$(head -c 4 "$f" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ] || continue
    grep -qaF -- "$MARK" "$f" && bad+=("${f#"$dir"/}")
    case ${f##*/} in sbxd|sbxctl|sbx-mcp|sbx-exec) progs+=("$f") ;; esac
  done < <(find "$dir" -type f -print0)
  for f in "${progs[@]}"; do
    out=$("$f" --version 2>&1) || { bad+=("${f#"$dir"/} (--version failed: $out)"); continue; }
    v=${out%%$'\n'*}
    [[ $v =~ ^(sbxd|sbxctl|sbx-mcp|sbx-exec)\ [0-9][A-Za-z0-9.+~]*$ ]] || bad+=("${f#"$dir"/} (--version: $v)")
  done
  if [ "${#progs[@]}" != 4 ]; then
    echo "FAIL $name: found ${#progs[@]} programs named sbxd, sbxctl, sbx-mcp or sbx-exec, expected 4: ${progs[*]#"$dir"/}"; return 1
  elif [ "${#bad[@]}" -gt 0 ]; then
    echo "FAIL $name: a testbed build (-Dtestbed-unenforced-limits=true): ${bad[*]}"; return 1
  fi
  echo "ok $name: a production build (sbxd, sbxctl, sbx-mcp, sbx-exec; no ELF file carries the testbed mark)"
}

rc=0
for p in "$@"; do
  d=$(mktemp -d "${TMPDIR:-/tmp}/sbx-check.XXXXXX")
  case $p in
    *.deb) dpkg-deb -x "$p" "$d" || { echo "FAIL $p: cannot unpack"; rc=1; rm -rf "$d"; continue; } ;;
    *.rpm) (cd "$d" && rpm2cpio "$p" | cpio -idm --quiet) || { echo "FAIL $p: cannot unpack"; rc=1; rm -rf "$d"; continue; } ;;
    *) [ -d "$p" ] || { echo "FAIL $p: neither a .deb, an .rpm nor a directory"; rc=1; rm -rf "$d"; continue; }
       rmdir "$d"; d="" ;;
  esac
  check "$(basename "$p")" "${d:-$p}" || rc=1
  [ -n "$d" ] && rm -rf "$d"
done
exit "$rc"
