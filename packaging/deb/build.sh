#!/usr/bin/env bash
# packaging/deb/build.sh - build the Debian source and binary packages of sbx from this tree, then check
# them with lintian.
#
#   packaging/deb/build.sh [OUTDIR]       (default OUTDIR: <repo>/build/packages)
#
# The tree is packaged as it is (uncommitted changes included): its files are copied to a scratch
# directory, packaging/deb/debian becomes debian/ there, and debian/changelog is written with the
# version from meson.build (the one version of sbx). dpkg-buildpackage then builds a native source
# package and the binary package; lintian checks both and fails the build on any error or warning.
# Tags overridden in debian/*lintian-overrides are listed in OUTDIR/lintian.txt (with "O:").
# Output: OUTDIR/sbx_VERSION_ARCH.deb (+ .dsc, .tar.xz, .buildinfo, .changes), lintian.txt.
#
# env: SBX_DEB_VERSION   package version instead of meson.build's (e.g. for an upgrade test)
#      SBX_DEB_NOCHECK=1 skip the unit tests in the package build (DEB_BUILD_OPTIONS=nocheck)
#      SBX_DEB_LINTIAN=0 skip lintian
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$(realpath -m "${1:-$REPO/build/packages}")
die() { echo "deb-build: $*" >&2; exit 1; }

for c in dpkg-buildpackage dh meson jq; do command -v "$c" >/dev/null || die "$c is not installed (scripts/install-deps.sh)"; done
VERSION=${SBX_DEB_VERSION:-$(meson introspect --projectinfo "$REPO/meson.build" | jq -r .version)}
[[ $VERSION =~ ^[0-9][A-Za-z0-9.+~]*$ ]] || die "bad version '$VERSION'"

WORK=$(mktemp -d /var/tmp/sbx-deb.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
SRC=$WORK/sbx-$VERSION
mkdir -p "$SRC" "$OUT"

# the tree's files: tracked and untracked-but-not-ignored ones in a git checkout, else all but builds
cd "$REPO"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git ls-files -z -co --exclude-standard | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    tar --null -T - -cf - | tar -C "$SRC" -xf -
else
  tar --exclude='./build*' --exclude=./.git -cf - . | tar -C "$SRC" -xf -
fi
rm -rf "$SRC/debian"
cp -a "$REPO/packaging/deb/debian" "$SRC/debian"

# debian/changelog from meson.build's version; its date is the last commit's (reproducible builds)
when=$(git log -1 --format=%cD 2>/dev/null || true)
[ -n "$when" ] || when=$(date -R -d "@${SOURCE_DATE_EPOCH:-0}")
maint=$(sed -n 's/^Maintainer: //p' "$SRC/debian/control")
cat > "$SRC/debian/changelog" <<EOC
sbx ($VERSION) unstable; urgency=medium

  * sbx $VERSION, built from the sbx source tree.

 -- $maint  $when
EOC

cd "$SRC"
opts=()
[ "${SBX_DEB_NOCHECK:-0}" = 1 ] && export DEB_BUILD_OPTIONS="nocheck${DEB_BUILD_OPTIONS:+ $DEB_BUILD_OPTIONS}"
echo "deb-build: sbx $VERSION in $SRC${DEB_BUILD_OPTIONS:+ (DEB_BUILD_OPTIONS=$DEB_BUILD_OPTIONS)}"
dpkg-buildpackage -us -uc "${opts[@]}" >"$WORK/build.log" 2>&1 || { tail -n 60 "$WORK/build.log"; die "dpkg-buildpackage failed"; }
cd "$WORK"
arch=$(dpkg --print-architecture)
changes=sbx_${VERSION}_${arch}.changes
[ -f "$changes" ] || die "no $changes"
[ -f "sbx_${VERSION}_${arch}.deb" ] || die "dpkg-buildpackage made no sbx_${VERSION}_${arch}.deb"
# everything the .changes lists (source, binary and debug-symbol packages, buildinfo), and the .changes
for f in $(awk '/^Files:/ {on = 1; next} /^[^ ]/ {on = 0} on {print $5}' "$changes") "$changes"; do
  [ -f "$f" ] || die "dpkg-buildpackage made no $f"
  cp "$f" "$OUT/"
done
cp "$WORK/build.log" "$OUT/sbx_${VERSION}_build.log"
echo "deb-build: $OUT/sbx_${VERSION}_${arch}.deb ($(dpkg-deb -c "$OUT/sbx_${VERSION}_${arch}.deb" | grep -vc '/$') files)"
# a package is never a testbed build (docs/testbed.md)
"$REPO/packaging/check-production.sh" "$OUT/sbx_${VERSION}_${arch}.deb" || die "the package is a testbed build"

if [ "${SBX_DEB_LINTIAN:-1}" != 0 ]; then
  command -v lintian >/dev/null || die "lintian is not installed (scripts/install-deps.sh)"
  rc=0
  # --show-overrides makes lintian count an overridden warning as a failure (exit 2): what fails is an
  # error or warning it prints (E:, W:), or lintian itself failing (another exit status)
  lintian --fail-on error,warning --show-overrides --display-info --tag-display-limit 0 "$OUT/$changes" \
    > "$OUT/lintian.txt" 2>&1 || rc=$?
  cat "$OUT/lintian.txt"
  n_o=$(grep -c '^O: ' "$OUT/lintian.txt" || true)
  n_ew=$(grep -c '^[EW]: ' "$OUT/lintian.txt" || true)
  [ "$rc" = 0 ] || [ "$rc" = 2 ] || die "lintian failed (exit $rc)"
  [ "$n_ew" = 0 ] || die "lintian found $n_ew error(s) or warning(s)"
  echo "deb-build: lintian clean ($n_o overridden tag(s), listed above with O:)"
fi
