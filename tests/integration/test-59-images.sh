#!/usr/bin/env bash
# Base images (docs/images.md): a directory and a squashfs file built from the host's own busybox,
# imported into the store (sha256 digest, dm-verity data), a profile on the image, runs that see the
# image's /usr and not the host's, digests pinned right and wrong, the record's image section, removal
# refused while a run uses the image, and nothing left behind.
# lane: vm
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
t_require_systemd || t_summary
t_require_cmd mksquashfs || t_summary
t_require_cmd veritysetup || t_summary
[ -x /bin/busybox ] && file -L /bin/busybox 2>/dev/null | grep -q 'statically linked' ||
  { t_skip "no static busybox (busybox-static)"; t_summary; }

RUNPROF=/run/sbx/profiles.d
PROF=sbxtest_img
NAME=sbxtest-busybox
D=$(mktemp -d /var/tmp/sbxt-img.XXXXXX)

cleanup() {
  sbxctl image rm "$NAME" sbxtest-other >/dev/null 2>&1
  rm -f "$RUNPROF/$PROF.json"
  rmdir "$RUNPROF" 2>/dev/null
  rm -rf "$D"
  systemctl daemon-reload
}
t_on_exit cleanup

# the image: busybox and a few of its applets, and a marker only the image has
mkdir -p "$D/root/bin" "$D/root/etc" "$D/root/usr/share"
cp /bin/busybox "$D/root/bin/busybox"
for a in sh cat ls echo test id sleep; do ln -s busybox "$D/root/bin/$a"; done
printf 'ID=sbxtest-image\nNAME="sbx test image"\n' > "$D/root/etc/os-release"
echo "only in the image" > "$D/root/usr/share/sbxtest-marker"

mkdir -p "$RUNPROF"
cat > "$RUNPROF/$PROF.json" <<EOF2
{
  "version": 1,
  "description": "sbx test: a run on a base image",
  "files": { "base": "image", "image": "$NAME" },
  "network": { "mode": "none" },
  "resources": { "memory": "128M", "tasks": 32, "wall_time": "60s" }
}
EOF2
sbxctl profile reload >/dev/null || t_fail "sbxctl profile reload"

t_begin "import a directory: the mount points a run needs are added, the digest printed"
assert_rc 0 sbxctl image import "$NAME" "$D/root"
assert_match "$T_OUT" "^$NAME@sha256:[0-9a-f]{64}$" "import output"
DIG1=${T_OUT##*sha256:}
assert_file "$SBX_STATEDIR/images/$DIG1/image.raw"
assert_file "$SBX_STATEDIR/images/$DIG1/image.verity"
assert_eq "700" "$(stat -c %a "$SBX_STATEDIR/images")" "store mode"
assert_eq "$DIG1" "$(sha256sum "$SBX_STATEDIR/images/$DIG1/image.raw" | cut -c1-64)" "digest of image.raw"
unsquashfs -l "$SBX_STATEDIR/images/$DIG1/image.raw" > "$D/list.txt"
for p in bin/sh etc/os-release usr/share/sbxtest-marker proc home/sbx dev/shm sys/fs/cgroup var/tmp; do
  grep -qx "squashfs-root/$p" "$D/list.txt" || t_fail "the image lacks /$p"
done
# the same tree again: the same bytes, the same digest (a canonical serialization)
assert_rc 0 sbxctl image import "$NAME" "$D/root"
assert_eq "$NAME@sha256:$DIG1" "$T_OUT" "digest of the same tree"
t_pass

t_begin "import a squashfs file: a second version under the same name; one without mount points is refused"
mksquashfs "$D/root" "$D/bad.sqfs" -noappend -quiet -no-progress >/dev/null
assert_rc 125 sbxctl image import sbxtest-other "$D/bad.sqfs"
assert_contains "$T_OUT" "lacks mount points" "refusal"
mkdir -p "$D/root"/{proc,sys/fs/cgroup,dev/shm,run,tmp,var/tmp,home/sbx,root}
echo v2 > "$D/root/usr/share/sbxtest-version"
mksquashfs "$D/root" "$D/good.sqfs" -noappend -quiet -no-progress >/dev/null
assert_rc 0 sbxctl image import "$NAME" "$D/good.sqfs"
DIG2=${T_OUT##*sha256:}
assert_eq "$(sha256sum "$D/good.sqfs" | cut -c1-64)" "$DIG2" "digest of the file"
assert_rc 125 sbxctl image import "Bad/Name" "$D/good.sqfs"
assert_rc 0 sbxctl image list --json
assert_eq 2 "$(echo "$T_OUT" | jq "[.[] | select(.name == \"$NAME\")] | length")" "versions listed"
t_pass

t_begin "a run on the image sees the image's files, not the host's"
assert_rc 0 sbxctl run -p $PROF -- sh -c 'cat /etc/os-release /usr/share/sbxtest-version /usr/share/sbxtest-marker; test -e /usr/bin/apt && echo HOST-USR; id -u'
assert_contains "$T_OUT" "ID=sbxtest-image" "os-release"
assert_contains "$T_OUT" "v2" "the newest version"
assert_not_contains "$T_OUT" "HOST-USR" "host /usr"
RUN=$(last_run_id)
assert_eq "$NAME" "$(record_get "$RUN" .image.name)" "record image name"
assert_eq "sha256:$DIG2" "$(record_get "$RUN" .image.digest)" "record image digest"
assert_eq "true" "$(record_get "$RUN" .image.verity)" "record verity"
assert_eq "success" "$(record_get "$RUN" .stop_reason)" "stop reason"
assert_clean "after a run on an image"
t_pass

t_begin "a pinned digest: the older version runs; a wrong one is refused with 123 and nothing starts"
assert_rc 0 sbxctl run -p $PROF --image "$NAME@sha256:$DIG1" -- sh -c 'cat /usr/share/sbxtest-version 2>/dev/null || echo no-version'
assert_contains "$T_OUT" "no-version" "version 1 has no version file"
assert_eq "sha256:$DIG1" "$(record_get "$(last_run_id)" .image.digest)" "record digest of the pinned version"
before=$(record_count)
assert_rc 123 sbxctl run -p $PROF --image "$NAME@sha256:$(printf '%064d' 0)" -- true
assert_contains "$T_OUT" "digest mismatch" "message"
assert_eq "$before" "$(record_count)" "no record of a refused run"
assert_rc 125 sbxctl run -p $PROF --image "sbxtest-other" -- true
assert_rc 125 sbxctl run -p $PROF --image "Bad@x" -- true
assert_clean "after refused runs"
t_pass

t_begin "the exec helper runs from the host inside the image; the image cannot be removed while in use"
sbx_run_bg "$D/bg.out" -p $PROF -- sleep 20
UNIT=$(record_get "$RUN" .unit)
assert_contains "$(systemctl show -p ExecStart --value "$UNIT")" "/run/sbx-host/sbx-exec" "ExecStart"
assert_eq "$(systemctl show -p RootDirectory --value "$UNIT")" "/run/sbx/images/$DIG2" "RootDirectory"
assert_contains "$(systemctl show -p Requires --value "$UNIT")" "sbx-image@$DIG2.service" "the run requires the image's mount"
assert_eq active "$(systemctl is-active "sbx-image@$DIG2.service")" "the image's mount unit"
assert_eq "ro" "$(findmnt -n -o OPTIONS "/run/sbx/images/$DIG2" | cut -d, -f1)" "the mount is read-only"
dev=$(findmnt -n -o MAJ:MIN "/run/sbx/images/$DIG2" | tr -d ' ')
verity=$(dmsetup info -c --noheadings -o name,major,minor --separator ' ' 2>/dev/null | awk -v d="$dev" '$2 ":" $3 == d {print $1}')
assert_contains "$verity" "-verity" "the mount's device ($dev) is a dm-verity device"
assert_eq "128M" "$(systemctl show -p MemoryMax --value "$UNIT" | numfmt --to=iec)" "MemoryMax"
assert_rc 123 sbxctl image rm "$NAME"
assert_contains "$T_OUT" "in use" "refusal"
assert_eq "true" "$(sbxctl image list --json | jq ".[] | select(.digest == \"$DIG2\") | .in_use")" "in_use"
wait "$CPID"; assert_eq 0 $? "background run"
t_pass

t_begin "runs share one mount of the image while its hold lasts; without the hold and a run it goes"
m1=$(findmnt -n -o ID "/run/sbx/images/$DIG2")
assert_rc 0 sbxctl run -p $PROF -- cat /usr/share/sbxtest-version
assert_eq "v2" "$T_OUT" "a run after the earlier ones"
assert_eq "$m1" "$(findmnt -n -o ID "/run/sbx/images/$DIG2")" "the same mount (mount id)"
assert_eq active "$(systemctl is-active "sbx-image-hold@$DIG2.service")" "the hold"
systemctl stop "sbx-image-hold@$DIG2.service" "sbx-image-hold@$DIG1.service"
for i in $(seq 100); do [ -z "$(sbx_image_leftovers)" ] && break; sleep 0.1; done
assert_eq "" "$(sbx_image_leftovers)" "with no run and no hold: no unit, mount or dm-verity device"
t_pass

t_begin "a store entry whose dm-verity data was altered: the run fails closed (123), naming the image's mount"
printf 'x' | dd of="$SBX_STATEDIR/images/$DIG1/image.verity" bs=1 seek=4100 conv=notrunc status=none
assert_rc 123 sbxctl run -p $PROF --image "$NAME@sha256:$DIG1" -- cat /usr/share/sbxtest-marker
assert_not_contains "$T_OUT" "only in the image" "nothing ran"
assert_contains "$T_OUT" "base image's mount" "the line names the mount"
assert_contains "$(record_get "$(last_run_id)" .error)" "sbx-image@$DIG1.service" "the record names its unit"
assert_contains "$(journalctl -q -u "sbx-image@$DIG1.service" --no-pager 2>/dev/null)" "Failed to start" "the mount unit's start failed"
for i in $(seq 100); do [ -z "$(sbx_image_leftovers)" ] && break; sleep 0.1; done
assert_eq "" "$(sbx_image_leftovers)" "no unit (not even a failed one), mount point or dm-verity device left"
assert_clean "after the refused run"
t_pass

t_begin "a store entry whose image was altered (same size, one byte of its file system's superblock): dm-verity refuses the mount (123)"
# the squashfs superblock's mkfs time (bytes 8-11): a file system that would mount and run unchanged
# without dm-verity checking every block read
b=$(dd if="$SBX_STATEDIR/images/$DIG2/image.raw" bs=1 skip=8 count=1 status=none | od -An -tu1 | tr -d ' ')
printf "\\$(printf '%03o' $(( (b + 1) % 256 )))" | dd of="$SBX_STATEDIR/images/$DIG2/image.raw" bs=1 seek=8 conv=notrunc status=none
assert_rc 123 sbxctl run -p $PROF --image "$NAME@sha256:$DIG2" -- cat /usr/share/sbxtest-marker
assert_not_contains "$T_OUT" "only in the image" "nothing ran"
assert_contains "$(journalctl -q -u "sbx-image@$DIG2.service" --no-pager 2>/dev/null)" "cannot mount image" "the mount's own message"
for i in $(seq 100); do [ -z "$(sbx_image_leftovers)" ] && break; sleep 0.1; done
assert_eq "" "$(sbx_image_leftovers)" "no unit, mount point, dm-verity or loop device left"
assert_clean "after the refused run"
t_pass

t_begin "image rm removes every version; the store is empty of them and nothing is left"
assert_rc 0 sbxctl image rm "$NAME"
assert_eq 0 "$(sbxctl image list --json | jq "[.[] | select(.name == \"$NAME\")] | length")" "listed"
[ -e "$SBX_STATEDIR/images/$DIG1" ] && t_fail "version 1 still in the store"
[ -e "$SBX_STATEDIR/images/$DIG2" ] && t_fail "version 2 still in the store"
assert_eq "" "$(find "$SBX_STATEDIR/images" -mindepth 1 -maxdepth 1 -name '.import-*')" "import leftovers"
assert_rc 125 sbxctl run -p $PROF -- true
assert_contains "$T_OUT" "no such image" "run without the image"
for i in $(seq 100); do [ -z "$(sbx_image_leftovers)" ] && break; sleep 0.1; done
assert_eq "" "$(sbx_image_leftovers)" "units, mounts and dm-verity devices of the images"
assert_clean "at the end"
t_pass

t_summary
