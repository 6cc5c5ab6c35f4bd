#!/usr/bin/env bash
# packaging/rpm/build.sh - builds sbx's source RPM and binary RPMs from the tree as it is (uncommitted
# changes included), on this host (Debian's rpm works: macros.debian-compat supplies Fedora's macros).
#   1. the version: project() of meson.build (meson introspect --projectinfo)
#   2. the source tarball sbx-VERSION.tar.gz of the tree (see make_tarball in common.sh)
#   3. sbx.spec rendered from sbx.spec.in, and parsed (rpmspec -P)
#   4. rpmbuild -ba --nodeps in a private %_topdir (a temporary folder, removed unless the build fails)
#   5. the SRPM, the RPMs and the rendered sbx.spec copied to OUTDIR (sbx-debuginfo and
#      sbx-debugsource too when find-debuginfo's tools are installed: debugedit, elfutils, cpio)
#   6. with SBX_RPM_CHECK_FILES=1, check-files.sh on the binary RPM, with this rpmbuild's own build
#      folder (the check compiles nothing again)
# Usage: packaging/rpm/build.sh [OUTDIR]      (OUTDIR default: /tmp/sbx-rpm; created, RPMs replaced)
# Exit status: 0 only if every step passed; rpmbuild keeps its checks for unpackaged and missing files.
# env: SBX_RPM_NOCHECK=1  skip %check (rpmbuild --nocheck)
#      SBX_RPM_CHECK_FILES=1  step 6; its failure fails the build
#      SBX_SRC, SBX_RPM_COMPAT: see common.sh (the tree to package; whether to load the compat macros)
#      TMPDIR             where the private %_topdir is made (default /tmp)
set -euo pipefail
# shellcheck source=packaging/rpm/common.sh
. "$(dirname "$0")/common.sh"

OUT=${1:-/tmp/sbx-rpm}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd -P)
T0=$(date +%s)

TOP=$(mktemp -d "${TMPDIR:-/tmp}/sbx-rpmbuild.XXXXXX")
keep_top=1
trap 'if [ "$keep_top" = 1 ]; then echo "build.sh: failed; rpmbuild files kept in $TOP" >&2; else rm -rf "$TOP"; fi' EXIT
mkdir -p "$TOP"/{BUILD,BUILDROOT,RPMS,SOURCES,SPECS,SRPMS}

VERSION=$(sbx_version)
say "sbx $VERSION from $SRC"
make_tarball "$VERSION" "$TOP/SOURCES/sbx-$VERSION.tar.gz"
render_spec "$VERSION" "$TOP/SPECS/sbx.spec"
rpmspec -P "${RPM_COMPAT[@]}" "$TOP/SPECS/sbx.spec" > /dev/null || die "sbx.spec does not parse (rpmspec -P)"
echo "tarball: $(tar -tzf "$TOP/SOURCES/sbx-$VERSION.tar.gz" | grep -vc '/$') files"

say "rpmbuild"
args=(-ba --nodeps "${RPM_COMPAT[@]}" --define "_topdir $TOP")
[ -n "${SBX_RPM_NOCHECK:-}" ] && args+=(--nocheck)
# step 6 needs the build folder, which rpmbuild removes after a successful -ba unless --noclean
[ -n "${SBX_RPM_CHECK_FILES:-}" ] && args+=(--noclean)
rpmbuild "${args[@]}" "$TOP/SPECS/sbx.spec"

say "a production build"
# a package is never a testbed build (docs/testbed.md)
for r in "$TOP"/RPMS/*/sbx-[0-9]*.rpm; do
  "$(dirname "$0")/../check-production.sh" "$r" || die "$(basename "$r") is a testbed build"
done

say "output"
rm -f "$OUT"/sbx-*.rpm
cp "$TOP"/SRPMS/*.src.rpm "$OUT"/
find "$TOP/RPMS" -name '*.rpm' -exec cp {} "$OUT"/ \;
cp "$TOP/SPECS/sbx.spec" "$OUT/sbx.spec"
ls -l "$OUT"

if [ -n "${SBX_RPM_CHECK_FILES:-}" ]; then
  say "the RPM's files against meson install (check-files.sh)"
  bin=$(find "$TOP/RPMS" -name "sbx-$VERSION-*.rpm" | head -n 1)
  [ -n "$bin" ] || die "no binary sbx RPM in $TOP/RPMS"
  SBX_RPM_BUILDDIR="$TOP/BUILD/sbx-$VERSION/$(rpm "${RPM_COMPAT[@]}" --eval '%{_vpath_builddir}')" \
    "$(dirname "$0")/check-files.sh" "$bin" || die "check-files.sh: the RPM's files are not what meson installs"
fi
keep_top=0
echo "build.sh: done in $(( $(date +%s) - T0 ))s"
