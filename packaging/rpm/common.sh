# packaging/rpm/common.sh - shared by packaging/rpm/build.sh and check-files.sh (sourced, not run).
# Sets RPMDIR (this folder), SRC (the tree to package: $SBX_SRC, default the checkout containing this
# folder) and RPM_COMPAT (the rpm options that load macros.debian-compat, or none), and defines
# sbx_version, render_spec, make_tarball, say and die (exit status $SBX_DIE_STATUS, default 1).
# env: SBX_SRC         the source tree to package (default: the checkout containing packaging/rpm)
#      SBX_RPM_COMPAT  1: load macros.debian-compat; 0: do not; auto (default): load it unless this
#                      host's rpm already has Fedora's macros (%meson and %systemd_post)
# shellcheck shell=bash
RPMDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=$(cd "${SBX_SRC:-$RPMDIR/../..}" && pwd -P)
export LC_ALL=C.UTF-8

die() { echo "${0##*/}: $*" >&2; exit "${SBX_DIE_STATUS:-1}"; }
say() { printf '\n==== %s\n' "$*"; }

for tool in rpm rpmbuild rpmspec meson python3 tar; do
  command -v "$tool" >/dev/null || die "$tool not found"
done
[ -f "$SRC/meson.build" ] || die "$SRC is not the sbx source tree (no meson.build)"

# shellcheck disable=SC2034  # RPM_COMPAT is used by the scripts that source this file
case ${SBX_RPM_COMPAT:-auto} in
  1) RPM_COMPAT=(--load "$RPMDIR/macros.debian-compat") ;;
  0) RPM_COMPAT=() ;;
  auto)
    if [ "$(rpm --eval '%{?meson:1}%{?systemd_post:1}')" = 11 ]; then RPM_COMPAT=()
    else RPM_COMPAT=(--load "$RPMDIR/macros.debian-compat"); fi ;;
  *) die "SBX_RPM_COMPAT must be 1, 0 or auto" ;;
esac

# sbx_version: the version of project() in $SRC/meson.build, as meson reads it
sbx_version() {
  local v
  v=$(meson introspect --projectinfo "$SRC/meson.build" |
      python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])') ||
    die "cannot read the project version from $SRC/meson.build"
  [[ $v =~ ^[A-Za-z0-9._+~^]+$ ]] || die "project version '$v' is not a valid RPM Version"
  echo "$v"
}

# render_spec VERSION OUT: sbx.spec.in (beside this file) with @VERSION@ replaced, written to OUT
render_spec() {
  local in=$RPMDIR/sbx.spec.in
  [ -f "$in" ] || die "$in not found"
  sed "s/@VERSION@/$1/g" "$in" > "$2"
  ! grep -n '@[A-Z_]*@' "$2" || die "$2: placeholders left unreplaced"
}

# make_tarball VERSION OUT: a tar.gz of $SRC as it is on disk, below the folder sbx-VERSION/. In a git
# checkout: the tracked files that exist and the untracked ones not ignored (uncommitted changes
# included); elsewhere every file but .git, build folders and objects (as .gitignore says).
make_tarball() {
  local prefix="sbx-$1" out=$2
  local -a tarflags=(--sort=name --owner=0 --group=0 --numeric-owner --format=gnu
                     --transform "s,^,$prefix/,S")
  if [ "$(git -C "$SRC" rev-parse --show-toplevel 2>/dev/null)" = "$SRC" ]; then
    git -C "$SRC" ls-files -z --cached --others --exclude-standard |
      (cd "$SRC" && while IFS= read -r -d '' f; do
         if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi    # deleted, not yet committed
       done) | sort -z |
      tar -C "$SRC" "${tarflags[@]}" --no-recursion --null -T - -czf "$out"
  else
    find "$SRC" -mindepth 1 -maxdepth 1 ! -name .git ! -name 'build-*' -printf '%P\0' | sort -z |
      tar -C "$SRC" --exclude=.git --exclude=build --exclude='*.o' "${tarflags[@]}" --null -T - -czf "$out"
  fi
}
