#!/usr/bin/env bash
# packaging/rpm/check-files.sh - the drift check between meson and the RPM: the files of the binary
# RPM (rpm -qlp) must be exactly the files `meson install --destdir` installs from the tree.
#   1. the tree is packed and unpacked as build.sh packs it, and configured and compiled the way the
#      spec does it: rpmbuild -bc (%prep and %build of sbx.spec) in a private %_topdir; or, with
#      SBX_RPM_BUILDDIR, the meson build folder of that rpmbuild is given (build.sh does this with
#      SBX_RPM_CHECK_FILES=1: the check then compiles nothing of its own)
#   2. meson install --destdir into an empty folder
#   3. both lists compared, without directories (the RPM owns some), the %license and %doc files the
#      spec adds itself, rpm's /usr/lib/.build-id links, and man pages' compression suffix (rpm
#      compresses them after meson installed them)
# Prints the files installed by meson but missing from the RPM and the files in the RPM that meson
# does not install; exit status 1 if there is any, 0 if the lists agree, 2 on any other failure.
# rpmbuild itself already fails on unpackaged files and on %files entries that match nothing; this
# check also shows the comparison, and catches drift a glob in %files or a change to the tree since
# the RPM was built would hide.
# Usage: packaging/rpm/check-files.sh [RPMDIR | RPM]   (default /tmp/sbx-rpm, where build.sh puts them)
# env: SBX_SRC, SBX_RPM_COMPAT: see common.sh (the tree to compare with; the compat macros)
#      SBX_KEEP=1  keep the work folder (build log, unpacked tree, destdir) and print its path
#      SBX_RPM_BUILDDIR  a meson build folder that rpmbuild made from this tree with sbx.spec (step 1)
#      TMPDIR      where the work folder is made (default /tmp)
set -Eeuo pipefail
trap 'exit 2' ERR
SBX_DIE_STATUS=2
# shellcheck source=packaging/rpm/common.sh
. "$(dirname "$0")/common.sh"

ARG=${1:-/tmp/sbx-rpm}
T0=$(date +%s)

# ---- the binary RPM of sbx (not the SRPM, not debuginfo/debugsource)
if [ -f "$ARG" ]; then
  RPM=$ARG
else
  [ -d "$ARG" ] || die "$ARG: no such RPM or folder (run packaging/rpm/build.sh first)"
  RPM=""
  for f in "$ARG"/*.rpm; do
    [ -e "$f" ] || continue
    [ "$(rpm -qp --qf '%{NAME}|%{SOURCERPM}' "$f" 2>/dev/null)" != "sbx|(none)" ] || continue
    [ "$(rpm -qp --qf '%{NAME}' "$f" 2>/dev/null)" = sbx ] || continue
    [ -z "$RPM" ] || die "more than one binary sbx RPM in $ARG: $RPM $f"
    RPM=$f
  done
  [ -n "$RPM" ] || die "no binary sbx RPM in $ARG (run packaging/rpm/build.sh first)"
fi
VERSION=$(sbx_version)
rpm_version=$(rpm -qp --qf '%{VERSION}' "$RPM")
[ "$rpm_version" = "$VERSION" ] || die "$RPM is version $rpm_version, the tree $SRC is $VERSION: rebuild it"
echo "RPM:  $RPM"
echo "tree: $SRC ($VERSION)"

W=$(mktemp -d "${TMPDIR:-/tmp}/sbx-check-files.XXXXXX")
if [ -n "${SBX_KEEP:-}" ]; then trap 'echo "work folder kept: $W"' EXIT; else trap 'rm -rf "$W"' EXIT; fi
mkdir -p "$W"/{BUILD,BUILDROOT,RPMS,SOURCES,SPECS,SRPMS} "$W/dest"

# ---- 1. configure and compile as the spec does (or the build folder of that rpmbuild, given)
if [ -n "${SBX_RPM_BUILDDIR:-}" ]; then
  builddir=$SBX_RPM_BUILDDIR
  echo "build folder: $builddir (given)"
else
  say "configure and compile as sbx.spec does (rpmbuild -bc)"
  make_tarball "$VERSION" "$W/SOURCES/sbx-$VERSION.tar.gz"
  render_spec "$VERSION" "$W/SPECS/sbx.spec"
  if ! rpmbuild -bc --nodeps "${RPM_COMPAT[@]}" --define "_topdir $W" "$W/SPECS/sbx.spec" > "$W/build.log" 2>&1; then
    tail -n 40 "$W/build.log" >&2
    die "rpmbuild -bc failed (log: $W/build.log; SBX_KEEP=1 keeps it)"
  fi
  builddir=$W/BUILD/sbx-$VERSION/$(rpm "${RPM_COMPAT[@]}" --eval '%{_vpath_builddir}')
fi
[ -f "$builddir/build.ninja" ] || die "no meson build folder at $builddir"

# ---- 2. meson install
say "meson install --destdir"
if ! meson install -C "$builddir" --destdir "$W/dest" --no-rebuild > "$W/install.log" 2>&1; then
  tail -n 40 "$W/install.log" >&2
  die "meson install failed"
fi

# ---- 3. compare
say "compare"
mandir=$(rpm "${RPM_COMPAT[@]}" --eval '%{_mandir}')
docdir=$(rpm "${RPM_COMPAT[@]}" --eval '%{_defaultdocdir}')
licdir=$(rpm "${RPM_COMPAT[@]}" --eval '%{_defaultlicensedir}')
(cd "$W/dest" && find . ! -type d -printf '/%P\n') | sort > "$W/meson.list"
# FILENAMES, mode, flags (d: %doc, l: %license); no directories, no build-id links. doc.list: the
# %doc and %license files the spec adds below the doc and license folders
rpm -qp --qf '[%{FILENAMES}\t%{FILEMODES:perms}\t%{FILEFLAGS:fflags}\n]' "$RPM" |
  awk -F'\t' -v man="$mandir/" -v docdir="$docdir/" -v licdir="$licdir/" -v doc="$W/doc.list" '
    $2 ~ /^d/ || $1 ~ /^\/usr\/lib\/\.build-id\// { next }
    { f = $1
      if (index(f, man) == 1) sub(/\.(gz|bz2|xz|lzma|zst|Z)$/, "", f)
      print f
      if ($3 ~ /[dl]/ && (index(f, docdir) == 1 || index(f, licdir) == 1)) print f > doc }' |
  sort > "$W/rpm.list"
touch "$W/doc.list"; sort -o "$W/doc.list" "$W/doc.list"

comm -23 "$W/meson.list" "$W/rpm.list" > "$W/missing"
comm -13 "$W/meson.list" "$W/rpm.list" | comm -23 - "$W/doc.list" > "$W/extra"
n_meson=$(wc -l < "$W/meson.list") n_rpm=$(wc -l < "$W/rpm.list") n_doc=$(wc -l < "$W/doc.list")
echo "meson installs $n_meson files; the RPM has $n_rpm files ($n_doc of them %doc/%license)"
drift=0
if [ -s "$W/missing" ]; then
  drift=1
  echo "FAIL: installed by meson but not in the RPM (add them to %files in packaging/rpm/sbx.spec.in):"
  sed 's/^/  /' "$W/missing"
fi
if [ -s "$W/extra" ]; then
  drift=1
  echo "FAIL: in the RPM but not installed by meson (stale %files entries or a spec that adds files):"
  sed 's/^/  /' "$W/extra"
fi
if [ "$drift" = 0 ]; then
  echo "ok: the RPM's files are exactly what meson installs ($(( $(date +%s) - T0 ))s)"
else
  echo "check-files.sh: the RPM and meson install differ ($(( $(date +%s) - T0 ))s)"
fi
exit "$drift"
