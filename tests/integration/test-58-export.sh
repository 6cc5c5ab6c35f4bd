#!/usr/bin/env bash
# Reviewed export (docs/export.md): a run's ~/out is reviewed by sbx-export in the run's export unit
# once the run's processes are gone, and what passes is delivered into the caller's directory, owned by
# the caller; everything else is refused (one line each) or held for approval, and the record lists it
# all. The run is hostile: links, FIFOs, sockets, hard links, an ELF named .txt, an HTML page with a
# script, zip-slip and tar-slip archives, a file it keeps swapping for a symlink to /etc/shadow, a
# destination swapped during the run.
# lane: native
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
t_require_systemd || t_summary
t_require_cmd python3 || t_summary

RUNPROF=/run/sbx/profiles.d
PROF=sbxtest_export
HOLD=sbxtest_exporthold
CAPS=sbxtest_exportcaps
NOEXP=sbxtest_exportnone
LIVE=sbxtest_exportlive
U=nobody
D=$(mktemp -d /var/tmp/sbxt-exp.XXXXXX)
chmod 0755 "$D"

cleanup() {
  as_user sbxctl rm sbt-exp >/dev/null 2>&1
  rm -f "$RUNPROF/$PROF.json" "$RUNPROF/$HOLD.json" "$RUNPROF/$CAPS.json" "$RUNPROF/$NOEXP.json" "$RUNPROF/$LIVE.json"
  rmdir "$RUNPROF" 2>/dev/null
  rm -rf "$D"
  systemctl daemon-reload
}
t_on_exit cleanup

mkdir -p "$RUNPROF"
profile() { # NAME EXPORT-JSON
  local export=""
  [ -n "$2" ] && export=", \"export\": $2"
  cat > "$RUNPROF/$1.json" <<EOF
{
  "version": 1,
  "description": "sbx test: reviewed export",
  "network": { "mode": "none" },
  "resources": { "memory": "256M", "tasks": 64, "wall_time": "60s" }$export
}
EOF
}
profile $PROF '{ "allow_types": ["text/*", "application/zip", "application/x-tar", "inode/x-empty"] }'
profile $HOLD '{ "allow_types": ["text/plain", "text/html"], "approve_types": ["application/octet-stream"], "active_content": "approve" }'
profile $CAPS '{ "allow_types": ["text/plain", "application/octet-stream"], "max_files": 8, "max_file_bytes": "64K" }'
profile $NOEXP ''
profile $LIVE '{ "allow_types": ["text/plain"], "active_content": "approve" }'
sed -i 's/"wall_time": "60s"/"wall_time": "300s"/' "$RUNPROF/$LIVE.json" # a sandbox lives through several steps
systemctl daemon-reload

# a directory of the caller's (nobody) to export into
newdest() { local d; d=$(mktemp -d "$D/dest.XXXXXX"); chown $U: "$d"; chmod 0755 "$d"; echo "$d"; }
as_user() { runuser -u $U -- "$@"; }

# What the hostile run leaves in ~/out (it runs with the profile's sandbox, as its own dynamic user).
HOSTILE='
set -e
cd ~/out
printf "hello\n" > a.txt
mkdir -p sub/deeper emptydir
printf "x,y\n1,2\n" > sub/deeper/b.csv
ln -s /etc/passwd link
printf "one\n" > hard1; ln hard1 hard2
mkfifo fifo
python3 -c "import socket; s=socket.socket(socket.AF_UNIX); s.bind(\"sock\")"
printf "#!/bin/sh\necho hi\n" > script.txt; chmod 0755 script.txt
cp /bin/true readme.txt
printf "<html><body><script>alert(1)</script></body></html>\n" > page.html
python3 - <<PY
import io, tarfile, zipfile
with zipfile.ZipFile("slip.zip", "w") as z:
    z.writestr("good.txt", "good\n")
    z.writestr("../evil.txt", "evil\n")
    z.writestr("/abs.txt", "abs\n")
    z.writestr("good.txt", "dup\n")
zipfile.ZipFile("empty.zip", "w").close()
with tarfile.open("slip.tar", "w") as t:
    def add(name, data=b"", **kw):
        i = tarfile.TarInfo(name); i.size = len(data)
        for k, v in kw.items(): setattr(i, k, v)
        t.addfile(i, io.BytesIO(data) if data else None)
    add("ok.txt", b"ok\n")
    add("../../etc/cron.d/x", b"evil\n")
    add("ln", type=tarfile.SYMTYPE, linkname="/etc/shadow")
    add("hl", type=tarfile.LNKTYPE, linkname="ok.txt")
PY
# swapped, back and forth, for a symlink to a file the run cannot read but the reviewer could
( while :; do rm -f swap; printf "plain\n" > swap; rm -f swap; ln -s /etc/shadow swap; done ) &
sleep 1
'

t_begin "--export: only what passes is delivered, owned by the caller; every refusal has its line and its record entry"
dest=$(newdest)
t_run as_user sbxctl run -p $PROF --export "$dest" -- sh -c "$HOSTILE"
assert_eq 0 "$T_RC" "the run (the command's status)"
out=$T_OUT
run=$(as_user sbxctl list --no-legend | tail -n 1 | awk '{print $1}')
rec=$(as_user sbxctl show --json "$run")
t_log "$(printf '%s\n' "$out" | grep 'export:' | head -30 | tr '\n' '|')"
assert_eq true "$(jq -r .export.reviewed <<<"$rec")" "reviewed"
assert_eq "$dest" "$(jq -r .export.destination <<<"$rec")" "destination"
# delivered: the plain files, the empty directory, the exec script without its bits, the normalised
# archives (and the swapped file only if the review caught it as a plain file)
assert_eq "hello" "$(cat "$dest/a.txt")" "a.txt"
assert_eq "x,y" "$(head -n 1 "$dest/sub/deeper/b.csv")" "sub/deeper/b.csv"
[ -d "$dest/emptydir" ] || _t_err "the empty directory was not delivered"
assert_eq "$U $(id -gn $U) 644" "$(stat -c '%U %G %a' "$dest/script.txt")" "script.txt: the directory owner's, exec bits dropped"
assert_eq "$U" "$(stat -c %U "$dest/sub/deeper/b.csv")" "owner of a nested file"
assert_eq "$U" "$(stat -c %U "$dest/sub")" "owner of a directory"
for f in link hard1 hard2 fifo sock readme.txt page.html; do
  [ -e "$dest/$f" ] || [ -L "$dest/$f" ] && _t_err "$f was delivered"
done
reason() { jq -r --arg p "$1" '[.export.refused[] | select(.path == $p and (.entry // null) == null) | .reason] | first // "none"' <<<"$rec"; }
assert_eq symlink "$(reason link)" "link"
assert_eq "hard link" "$(reason hard1)" "hard1"
assert_eq fifo "$(reason fifo)" "fifo"
assert_eq socket "$(reason sock)" "sock"
assert_match "$(reason readme.txt)" "^type application/x-(pie-)?(executable|sharedlib) is not allowed" "an ELF named .txt"
assert_match "$(reason page.html)" "active content" "an HTML page with a script"
for f in link hard1 fifo sock readme.txt page.html; do
  assert_match "$out" "export: refused $f: " "the line for $f"
done
# archives: normalised, the bad entries listed
entry() { jq -r --arg p "$1" --arg e "$2" '[.export.refused[] | select(.path == $p and .entry == $e) | .reason] | first // "none"' <<<"$rec"; }
assert_match "$(entry slip.zip ../evil.txt)" "^archive entry: " "zip-slip entry"
assert_match "$(entry slip.zip /abs.txt)" "^archive entry: " "absolute zip entry"
assert_match "$(entry slip.tar ../../etc/cron.d/x)" "^archive entry: " "tar-slip entry"
assert_match "$(entry slip.tar ln)" "^archive entry: " "tar symlink entry"
assert_match "$(entry slip.tar hl)" "^archive entry: " "tar hard link entry"
zipnames=$(python3 -c 'import sys,zipfile; print(" ".join(zipfile.ZipFile(sys.argv[1]).namelist()))' "$dest/slip.zip")
assert_eq "good.txt" "$zipnames" "the delivered zip's members"
# a zip of no member (its end record alone) is normal as it is
assert_eq "0" "$(python3 -c 'import sys,zipfile; print(len(zipfile.ZipFile(sys.argv[1]).namelist()))' "$dest/empty.zip")" \
  "the delivered empty zip's members"
assert_eq none "$(reason empty.zip)" "no refusal of the empty zip"
tarnames=$(python3 -c 'import sys,tarfile; print(" ".join(tarfile.open(sys.argv[1]).getnames()))' "$dest/slip.tar")
assert_eq "ok.txt" "$tarnames" "the delivered tar's members"
# nothing of /etc/shadow anywhere, whatever the swap loop did
if [ -e "$dest/swap" ]; then
  [ -L "$dest/swap" ] && _t_err "swap was delivered as a symlink"
  assert_eq "plain" "$(cat "$dest/swap")" "swap, if delivered, is the plain file"
fi
# the needle is root's whole line ("root:HASH:..."): the hash alone is "*" or "!" on hosts without a root
# password, which any binary delivered file (the zip) may hold by chance
root_line=$(grep -m1 '^root:' /etc/shadow)
[ -n "$root_line" ] || _t_err "no root line in /etc/shadow to look for"
grep -rqsF -- "$root_line" "$dest" && _t_err "shadow's content was delivered"
# every delivered file's sha256 is in the record, and is the file's
while IFS=$'\t' read -r p h; do
  assert_eq "$h" "$(sha256sum "$dest/$p" | cut -d' ' -f1)" "sha256 of $p"
done < <(jq -r '.export.exported[] | select(.type != "inode/directory") | [.path, .sha256] | @tsv' <<<"$rec")
assert_eq "$(find "$dest" -type f | wc -l)" "$(jq '[.export.exported[] | select(.type != "inode/directory")] | length' <<<"$rec")" \
  "files in the destination = exported files in the record"
[ -z "$(find "$dest" -type l -o -type p -o -type s -o -perm /7000 -o -perm /111 -type f)" ] ||
  _t_err "a link, FIFO, socket, setuid/setgid/sticky or executable file in the destination"
assert_clean
[ -z "$(ls -A /var/lib/sbx/exports 2>/dev/null)" ] || _t_err "the review's staging is left: $(ls -A /var/lib/sbx/exports)"
t_pass

t_begin "held for approval: approve delivers the reviewed copy, reject discards it, nothing stays"
dest=$(newdest)
# blob: 3000 fixed bytes (SHA-256 digests), application/octet-stream; bytes from /dev/urandom are another type
# one time in 200 (application/x-dosexec, say), which this profile refuses instead of holding
t_run as_user sbxctl run -p $HOLD --export "$dest" -- sh -c \
  'printf "<p onclick=\"x()\">hi</p>\n" > ~/out/page.html; printf "ok\n" > ~/out/ok.txt
   python3 -c "import hashlib, sys; sys.stdout.buffer.write(b\"\".join(hashlib.sha256(b\"%d\" % i).digest() for i in range(94))[:3000])" > ~/out/blob'
assert_eq 0 "$T_RC" "the run"
run=$(as_user sbxctl list --no-legend | tail -n 1 | awk '{print $1}')
rec=$(as_user sbxctl show --json "$run")
assert_eq 2 "$(jq '.export.held | length' <<<"$rec")" "held items"
assert_contains "$T_OUT" "export: held page.html" "the held line"
[ -e "$dest/page.html" ] && _t_err "a held item was delivered before approval"
hid=$(jq -r '.export.held[] | select(.path == "page.html") | .id' <<<"$rec")
bid=$(jq -r '.export.held[] | select(.path == "blob") | .id' <<<"$rec")
bhash=$(jq -r '.export.held[] | select(.path == "blob") | .sha256' <<<"$rec")
ls -A "/var/lib/sbx/exports/$run/held" >/dev/null 2>&1 || _t_err "no quarantine for run $run"
# another user may not approve it (nor learn that the run exists)
t_run runuser -u daemon -- sbxctl export approve "$run" "$hid"
assert_ne 0 "$T_RC" "another user's approval"
assert_rc 0 as_user sbxctl export approve "$run" "$bid"
assert_eq "$bhash" "$(sha256sum "$dest/blob" | cut -d' ' -f1)" "the approved file is the reviewed copy"
assert_eq "$U 644" "$(stat -c '%U %a' "$dest/blob")" "its owner and mode"
assert_rc 0 as_user sbxctl export reject "$run" "$hid"
[ -e "$dest/page.html" ] && _t_err "a rejected item was delivered"
rec=$(as_user sbxctl show --json "$run")
assert_eq 0 "$(jq '.export.held | length' <<<"$rec")" "nothing held"
assert_eq rejected "$(jq -r '.export.refused[] | select(.path == "page.html") | .reason' <<<"$rec")" "the rejected item"
assert_eq '["approved"]' "$(jq -c '.export.exported[] | select(.path == "blob") | .notes' <<<"$rec")" "the approved item"
assert_rc 125 as_user sbxctl export approve "$run" "$hid"
[ -e "/var/lib/sbx/exports/$run" ] && _t_err "the quarantine of run $run is left"
t_pass

t_begin "caps: files past the count and size caps are refused, each with its line"
dest=$(newdest)
t_run as_user sbxctl run -p $CAPS --export "$dest" -- sh -c \
  'cd ~/out; head -c 100000 /dev/zero > big; for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo $i > f$i.txt; done'
assert_eq 0 "$T_RC" "the run"
run=$(as_user sbxctl list --no-legend | tail -n 1 | awk '{print $1}')
rec=$(as_user sbxctl show --json "$run")
assert_eq "too large" "$(jq -r '.export.refused[] | select(.path == "big") | .reason' <<<"$rec")" "a file over max_file_bytes"
[ -e "$dest/big" ] && _t_err "the file over the cap was delivered"
n=$(jq '[.export.refused[] | select(.reason | startswith("over the file count cap"))] | length' <<<"$rec")
[ "$n" -ge 4 ] || _t_err "expected at least 4 entries over the count cap, got $n"
files=$(find "$dest" -type f | wc -l)
[ "$files" -le 8 ] || _t_err "$files files delivered past max_files 8"
assert_contains "$T_OUT" "over the file count cap" "their lines"
t_pass

t_begin "bad input: refused before anything starts, with one line and exit 125, nothing left"
before=$(record_count)
t_run as_user sbxctl run -p $PROF --export "$D/nonexistent" -- true
assert_eq 125 "$T_RC" "a directory that does not exist"
assert_match "$T_OUT" "^sbxctl: export: '$D/nonexistent': No such file" "its line"
t_run as_user sbxctl run -p $NOEXP --export "$(newdest)" -- true
assert_eq 125 "$T_RC" "a profile without export"
assert_contains "$T_OUT" "export: profile '$NOEXP' does not export through review"
mkdir "$D/roots"; chmod 0777 "$D/roots"
t_run as_user sbxctl run -p $PROF --export "$D/roots" -- true
assert_eq 125 "$T_RC" "a directory of another user's"
assert_contains "$T_OUT" "export: '$D/roots' is not owned by the caller"
assert_eq "$before" "$(record_count)" "no record for a refused request"
assert_clean
t_pass

t_begin "a destination swapped during the run gets nothing: the review checks it is the directory given"
dest=$(newdest)
sbx_run_bg "$D/swap.out" -p $PROF --export "$dest" -- sh -c 'echo x > ~/out/a.txt; sleep 3'
mv "$dest" "$dest.moved"
mkdir "$dest"; chown $U: "$dest"
wait "$CPID"; rc=$?
assert_eq 123 "$rc" "sbxctl: the command succeeded, its output was not delivered"
assert_contains "$(cat "$D/swap.out")" "export: the destination is not the directory that was checked" "the line"
[ -z "$(ls -A "$dest")" ] || _t_err "something was written into the directory put in its place"
[ -z "$(ls -A "$dest.moved")" ] || _t_err "something was written into the moved directory"
assert_eq false "$(record_get "$RUN" .export.reviewed)" "the record says so"
assert_clean
[ -z "$(ls -A /var/lib/sbx/exports 2>/dev/null)" ] || _t_err "staging left: $(ls -A /var/lib/sbx/exports)"
t_pass

t_begin "a live sandbox: exported twice while it runs, held ids never reused, approved by id; nothing left once removed"
dest=$(newdest); dest2=$(newdest)
assert_rc 0 as_user sbxctl create --detach -p $LIVE --name sbt-exp
sb=$T_OUT
assert_rc 0 as_user sbxctl exec sbt-exp -- sh -c \
  'mkdir ~/out && cd ~/out && printf "good\n" > good.txt && ln -s /etc/passwd link && printf "<html><script>x()</script></html>\n" > page.html'
t_run as_user sbxctl export sbt-exp out --to "$dest"
assert_eq 0 "$T_RC" "the first export"
assert_eq "good" "$(cat "$dest/good.txt")" "the good file"
assert_eq "$U 644" "$(stat -c '%U %a' "$dest/good.txt")" "its owner and mode"
{ [ -e "$dest/link" ] || [ -L "$dest/link" ]; } && _t_err "the symlink was delivered"
[ -e "$dest/page.html" ] && _t_err "a held item was delivered"
assert_contains "$T_OUT" "export: refused link: symlink" "the symlink's line"
assert_match "$T_OUT" "export: held page.html \(active content: [^)]*\): sbxctl export approve $sb h1" "the held line"
# the sandbox goes on; a second export reviews the tree again, its held items numbered on
assert_rc 0 as_user sbxctl exec "$sb" -- sh -c 'printf "<p onclick=\"y()\">two</p>\n" > ~/out/two.html'
t_run as_user sbxctl export "$sb" out --to "$dest2"
assert_eq 0 "$T_RC" "the second export"
assert_match "$T_OUT" "export: held page.html .*approve $sb h2" "the page, held again under another id"
assert_match "$T_OUT" "export: held two.html .*approve $sb h3" "the new page"
assert_eq "good" "$(cat "$dest2/good.txt")" "the good file, again"
rec=$(as_user sbxctl show --json "$sb")
assert_eq "h1 h2 h3" "$(jq -r '[.export.held[].id] | join(" ")' <<<"$rec")" "the record's held items, of both exports"
assert_eq 2 "$(jq '[.export.refused[] | select(.path == "link")] | length' <<<"$rec")" "both exports' refusals"
assert_eq "$dest2" "$(jq -r .export.destination <<<"$rec")" "the last export's destination"
# approved while the sandbox runs, into the first export's directory
assert_rc 0 as_user sbxctl export approve --to "$dest" "$sb" h1
assert_contains "$(cat "$dest/page.html")" "<script>" "the approved page"
# bad input: refused, nothing started
t_run as_user sbxctl export "$sb" ../x --to "$dest"
assert_eq 125 "$T_RC" "a path that climbs out of HOME"
assert_contains "$T_OUT" "is not a relative path in the sandbox's HOME"
t_run as_user sbxctl export sbt-nosuch out --to "$dest"
assert_eq 1 "$T_RC" "an unknown sandbox"
assert_rc 0 as_user sbxctl rm "$sb"
for i in $(seq 300); do [ "$(record_get "$sb" .state 2>/dev/null)" = finished ] && break; sleep 0.1; done
rec=$(as_user sbxctl show --json "$sb")
assert_eq true "$(jq -r .export.reviewed <<<"$rec")" "no review at the sandbox's end: nothing failed"
assert_eq "h2 h3" "$(jq -r '[.export.held[].id] | join(" ")' <<<"$rec")" "held still"
[ -d "/var/lib/sbx/exports/$sb/held" ] || _t_err "the held items went with the sandbox"
[ -e "/var/lib/sbx/exports/$sb/stage" ] && _t_err "the staging is left"
assert_rc 0 as_user sbxctl export reject "$sb"
[ -e "/var/lib/sbx/exports/$sb" ] && _t_err "/var/lib/sbx/exports/$sb is left with nothing held"
assert_clean
t_pass

t_summary
