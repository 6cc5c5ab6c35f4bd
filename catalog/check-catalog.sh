#!/usr/bin/env bash
# check-catalog.sh - the journal catalog matches the code (a meson test; needs no root).
#   check-catalog.sh MESSAGE_IDS_H CATALOG [SOURCE...]
# Fails when an ID of MESSAGE_IDS_H has no catalog entry or the catalog has one the code does not define,
# when an entry lacks Subject:/Defined-By:, when an @FIELD@ a text uses is not a field any SOURCE sends,
# or when journalctl cannot build a catalog database from the file.
set -euo pipefail
H=$1 CAT=$2; shift 2
fail=0
bad() { echo "check-catalog: $*" >&2; fail=1; }

mapfile -t code_ids < <(sed -n 's/^#define SBX_MESSAGE_[A-Z_]* *"\([0-9a-f]\{32\}\)".*/\1/p' "$H" | sort)
mapfile -t cat_ids < <(sed -n 's/^-- \([0-9a-f]\{32\}\)$/\1/p' "$CAT" | sort)
[ "${#code_ids[@]}" -gt 0 ] || bad "no SBX_MESSAGE_ ids found in $H"
dups=$(printf '%s\n' "${code_ids[@]}" | uniq -d)
[ -z "$dups" ] || bad "$H defines an id twice: $dups"
dups=$(printf '%s\n' "${cat_ids[@]}" | uniq -d)
[ -z "$dups" ] || bad "$CAT has two entries for: $dups"
only_code=$(comm -23 <(printf '%s\n' "${code_ids[@]}") <(printf '%s\n' "${cat_ids[@]}"))
only_cat=$(comm -13 <(printf '%s\n' "${code_ids[@]}") <(printf '%s\n' "${cat_ids[@]}"))
[ -z "$only_code" ] || bad "ids without a catalog entry: $only_code"
[ -z "$only_cat" ] || bad "catalog entries for ids the code does not define: $only_cat"

# each entry: a Subject and Defined-By: sbx header before its first empty line
awk -v f="$CAT" '
  /^-- [0-9a-f]{32}$/ { if (id != "") check(); id = $2; hdr = 1; subj = 0; def = 0; next }
  id != "" && hdr && /^$/ { hdr = 0; next }
  id != "" && hdr && /^Subject: ./ { subj = 1 }
  id != "" && hdr && /^Defined-By: sbx$/ { def = 1 }
  function check() { if (!subj || !def) { print "check-catalog: " f ": entry " id " lacks Subject: or Defined-By: sbx" > "/dev/stderr"; bad = 1 } }
  END { if (id != "") check(); exit bad }' "$CAT" || fail=1

# every @FIELD@ is a field some source sends (as the string "FIELD" or "FIELD=...")
if [ "$#" -gt 0 ]; then
  for fld in $(grep -v '^#' "$CAT" | grep -o '@[A-Z_]*@' | tr -d @ | sort -u); do
    grep -qE "\"$fld[\"=]" "$@" || bad "the catalog uses @$fld@, which no source sends"
  done
fi

# journalctl builds its database from it, and lists exactly these ids
if command -v journalctl >/dev/null; then
  root=$(mktemp -d); trap 'rm -rf "$root"' EXIT
  mkdir -p "$root/usr/lib/systemd/catalog"; cp "$CAT" "$root/usr/lib/systemd/catalog/sbx.catalog"
  if ! out=$(journalctl --root="$root" --update-catalog 2>&1) || [ -n "$out" ]; then
    bad "journalctl --update-catalog: ${out:-failed}"
  fi
  listed=$(journalctl --root="$root" --list-catalog 2>/dev/null | awk '{print $1}' | sort | tr '\n' ' ')
  [ "$listed" = "$(printf '%s ' "${code_ids[@]}")" ] || bad "journalctl lists [$listed], expected [${code_ids[*]}]"
else
  echo "check-catalog: journalctl not found: the database build was not checked"
fi
[ "$fail" = 0 ] && echo "check-catalog: ${#code_ids[@]} ids, catalog consistent"
exit "$fail"
