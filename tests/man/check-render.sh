#!/usr/bin/env bash
# Every generated man page renders without a groff warning, the way Debian's lintian checks pages,
# and has a NAME section that whatis/apropos can read (no root needed).
#
#   check-render.sh PAGE...
#
# Exit status: 0 all pages are clean, 1 a page is not, 77 (skipped) when the pages were not built
# (no PAGE given; $SBX_MAN_SKIP says why) or man is not installed.
set -uo pipefail

if [ "$#" -eq 0 ]; then
  echo "SKIP: the man pages were not built: ${SBX_MAN_SKIP:-no page given}"
  exit 77
fi
if ! command -v man > /dev/null 2>&1; then
  echo "SKIP: man (man-db) is not installed, so the pages cannot be rendered"
  exit 77
fi

FAILED=0
fail() { echo "FAIL: $*"; FAILED=1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/sbx-man.XXXXXX")
trap 'rm -rf "$T"' EXIT

for page in "$@"; do
  name=${page##*/}
  [ -s "$page" ] || { fail "$name: missing or empty ($page)"; continue; }

  # lintian's groff-message check, verbatim: nothing may appear on stderr
  LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 \
    man --warnings -E UTF-8 -l -Tutf8 -Z "$page" > /dev/null 2> "$T/err"
  if [ -s "$T/err" ]; then
    fail "$name: groff warnings:"
    sed 's/^/    /' "$T/err"
  fi

  # the page as a reader sees it: rendered, not empty, with the section title and a footer that
  # names the version (and no build date: the pages must be reproducible)
  LC_ALL=C.UTF-8 MANWIDTH=80 man -E UTF-8 -l "$page" > "$T/text" 2> "$T/err"
  [ -s "$T/err" ] && { fail "$name: man printed on stderr:"; sed 's/^/    /' "$T/err"; }
  grep -q '^NAME$' "$T/text" || fail "$name: no NAME section in the rendered page"
  tail -n 1 "$T/text" | grep -Eq '^sbx [0-9]+\.[0-9]+' || fail "$name: the footer does not name the sbx version: $(tail -n 1 "$T/text")"
  tail -n 1 "$T/text" | grep -Eq '(19|20)[0-9]{2}' && fail "$name: the footer carries a date: $(tail -n 1 "$T/text")"

  # the NAME line as mandb parses it: "name - description"
  if command -v lexgrog > /dev/null 2>&1; then
    want=${name%.*}
    out=$(lexgrog "$page" 2>&1)
    case $out in
      *": \"$want - "*) ;;
      *) fail "$name: lexgrog does not find a whatis entry for $want: $out" ;;
    esac
  fi
done

[ "$FAILED" = 0 ] && echo "ok: $# page(s) render without warnings"
exit "$FAILED"
