#!/usr/bin/env bash
# Named caches (docs/caches.md): each its own file system of the profile's max_size (a write past it
# fails with ENOSPC), per caller and profile (another caller's run never sees it), read-only on request
# (a write fails with EROFS: a networkless phase cannot poison what an install phase fetched), listed,
# removed and pruned by their owner. And the two-phase recipe of docs/recipes.md end to end: install from
# a lockfile with registry access (a package index of the test's own, in testnet.sh's namespace), then
# run the result with --network none and the cache read-only.
# lane: native
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
. "$(dirname "$0")/testnet.sh"
t_require_systemd || t_summary

RUNPROF=/run/sbx/profiles.d
PROF=sbxtest_cache
RECIPE=sbxtest_recipe
U=nobody
PORT=8080
D=$(mktemp -d /var/tmp/sbxt-cache.XXXXXX)
chmod 0755 "$D"
[ -d /etc/sbx ] || MADE_ETC=1
IDXPID=""

cleanup() {
  [ -n "$IDXPID" ] && kill "$IDXPID" 2>/dev/null
  testnet_down
  sbxctl cache rm $PROF/small $RECIPE/wheels >/dev/null 2>&1
  runuser -u $U -- sbxctl cache rm $PROF/small >/dev/null 2>&1
  rm -f "$RUNPROF/$PROF.json" "$RUNPROF/$RECIPE.json" /etc/sbx/sbxd.conf
  [ "${MADE_ETC:-0}" = 1 ] && rmdir /etc/sbx 2>/dev/null
  rmdir "$RUNPROF" 2>/dev/null
  rm -rf "$D"
  systemctl daemon-reload
}
t_on_exit cleanup

mkdir -p "$RUNPROF"
cat > "$RUNPROF/$PROF.json" <<EOF
{
  "version": 1,
  "description": "sbx test: a small cache",
  "network": { "mode": "none" },
  "resources": { "memory": "256M", "tasks": 64, "wall_time": "60s" },
  "lifetime": { "caches": [ { "name": "small", "path": ".cache/small", "max_size": "16M" } ] }
}
EOF
cat > "$RUNPROF/$RECIPE.json" <<EOF
{
  "version": 1,
  "description": "sbx test: install with registry access, run without",
  "files": { "workspace": "writable" },
  "network": { "mode": "allowlist", "destinations": [ { "address": "$TN_SRV/32", "ports": [$PORT] } ] },
  "resources": { "memory": "512M", "tasks": 128, "wall_time": "5min" },
  "lifetime": { "caches": [ { "name": "wheels", "path": ".cache/wheels", "max_size": "64M" } ] },
  "request": { "network": ["none"] }
}
EOF
systemctl daemon-reload

t_begin "a cache is a file system of its max_size: a write past it fails with ENOSPC, what fits stays"
t_run sbxctl run -p $PROF -- sh -c 'echo kept > ~/.cache/small/marker; head -c 32000000 /dev/zero > ~/.cache/small/big; echo "write=$?"; rm -f ~/.cache/small/big'
assert_eq 0 "$T_RC" "the run"
assert_contains "$T_OUT" "No space left on device" "the write past the cap"
assert_contains "$T_OUT" "write=1"
t_run sbxctl run -p $PROF -- sh -c 'cat ~/.cache/small/marker'
assert_contains "$T_OUT" "kept" "the next run of the caller finds it"
findmnt -rn | grep -q "sbx-cache" && _t_err "a cache is still mounted after its runs: $(findmnt -rn | grep sbx-cache)"
assert_clean
t_pass

t_begin "--cache-ro: the run reads the cache and cannot change it (EROFS)"
t_run sbxctl run -p $PROF --cache-ro small -- sh -c 'cat ~/.cache/small/marker; echo poison > ~/.cache/small/marker; echo "write=$?"; rm ~/.cache/small/marker; echo "rm=$?"; touch ~/.cache/small/new; echo "touch=$?"'
assert_eq 0 "$T_RC" "the run"
assert_contains "$T_OUT" "kept" "it reads"
assert_contains "$T_OUT" "Read-only file system"
assert_contains "$T_OUT" "write=2"
assert_contains "$T_OUT" "rm=1"
assert_contains "$T_OUT" "touch=1"
t_run sbxctl run -p $PROF -- sh -c 'cat ~/.cache/small/marker'
assert_eq "kept" "$T_OUT" "unchanged afterwards"
t_run sbxctl run -p $PROF --cache-ro nosuch -- true
assert_eq 125 "$T_RC" "an unknown cache"
assert_contains "$T_OUT" "cache-ro: profile '$PROF' has no cache 'nosuch'"
t_pass

t_begin "another caller's run never sees the cache; each lists and removes only its own"
t_run runuser -u $U -- sbxctl run -p $PROF -- sh -c 'ls -A ~/.cache/small; cat ~/.cache/small/marker 2>&1; echo theirs > ~/.cache/small/marker'
assert_eq 0 "$T_RC" "the other caller's run"
assert_not_contains "$T_OUT" "kept" "the first caller's content"
assert_contains "$T_OUT" "No such file"
t_run sbxctl run -p $PROF -- sh -c 'cat ~/.cache/small/marker'
assert_eq "kept" "$T_OUT" "the first caller's cache is its own"
t_run runuser -u $U -- sbxctl cache list --json
assert_eq 1 "$(jq "[.[] | select(.profile == \"$PROF\" and .name == \"small\")] | length" <<<"$T_OUT")" "nobody's list"
assert_eq false "$(jq -r ".[] | select(.profile == \"$PROF\") | .in_use" <<<"$T_OUT")" "not in use"
t_run sbxctl cache list
assert_match "$T_OUT" "$PROF +small " "root's list"
assert_rc 0 runuser -u $U -- sbxctl cache rm $PROF/small
for i in $(seq 50); do runuser -u $U -- sbxctl cache list --json | jq -e "length == 0" >/dev/null && break; sleep 0.2; done
assert_eq 0 "$(runuser -u $U -- sbxctl cache list --json | jq "[.[] | select(.profile == \"$PROF\")] | length")" "removed"
t_run sbxctl run -p $PROF -- sh -c 'cat ~/.cache/small/marker'
assert_eq "kept" "$T_OUT" "the other caller's removal left this one"
t_run runuser -u $U -- sbxctl cache rm $PROF/small
assert_eq 1 "$T_RC" "a cache that is not there"
assert_contains "$T_OUT" "you have no cache $PROF/small"
t_pass

t_begin "cache prune removes the caller's caches past CacheRetentionSec="
mkdir -p /etc/sbx
printf 'CacheRetentionSec=1s\n' > /etc/sbx/sbxd.conf
sleep 2
t_run sbxctl cache prune --json
assert_eq 0 "$T_RC" "prune"
assert_eq 1 "$(jq "[.[] | select(.profile == \"$PROF\" and .name == \"small\")] | length" <<<"$T_OUT")" "pruned"
rm -f /etc/sbx/sbxd.conf
for i in $(seq 50); do sbxctl cache list --json | jq -e "[.[] | select(.profile == \"$PROF\")] | length == 0" >/dev/null && break; sleep 0.2; done
t_run sbxctl run -p $PROF -- sh -c 'cat ~/.cache/small/marker 2>&1'
assert_contains "$T_OUT" "No such file" "a new, empty cache after the prune"
ls /var/lib/private/sbx-cache-images/*/$PROF/small.img >/dev/null 2>&1 || _t_err "the new cache has no image"
t_pass

t_begin "recipe: install from a lockfile with registry access, then run with --network none and the cache read-only"
if ! testnet_up; then
  t_fail "the test network did not come up: $TN_ERROR"
else
  # a package index of the test's own: one wheel, served in the test network's namespace
  mkdir -p "$D/index/simple/sbxdemo" "$D/ws"
  /usr/bin/python3 - "$D/index" <<'PY'
import base64, hashlib, os, sys, zipfile
root = sys.argv[1]
files = {"sbxdemo/__init__.py": b"ANSWER = 42\n",
         "sbxdemo-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: sbxdemo\nVersion: 1.0\n",
         "sbxdemo-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: sbx-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
record = ""
for name, data in files.items():
    h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    record += f"{name},sha256={h},{len(data)}\n"
record += "sbxdemo-1.0.dist-info/RECORD,,\n"
whl = os.path.join(root, "sbxdemo-1.0-py3-none-any.whl")
with zipfile.ZipFile(whl, "w") as z:
    for name, data in files.items():
        z.writestr(name, data)
    z.writestr("sbxdemo-1.0.dist-info/RECORD", record)
digest = hashlib.sha256(open(whl, "rb").read()).hexdigest()
with open(os.path.join(root, "simple", "sbxdemo", "index.html"), "w") as f:
    f.write(f'<html><body><a href="../../sbxdemo-1.0-py3-none-any.whl#sha256={digest}">sbxdemo-1.0-py3-none-any.whl</a></body></html>\n')
print(digest)
PY
  digest=$(sha256sum "$D/index/sbxdemo-1.0-py3-none-any.whl" | cut -d' ' -f1)
  printf 'sbxdemo==1.0 --hash=sha256:%s\n' "$digest" > "$D/ws/requirements.txt"
  ip netns exec $TN_NS timeout 300 /usr/bin/python3 -m http.server $PORT --bind $TN_SRV --directory "$D/index" \
    >/dev/null 2>&1 & IDXPID=$!
  for i in $(seq 50); do ip netns exec $TN_NS ss -Htln | grep -q ":$PORT " && break; sleep 0.1; done
  # phase 1: the lockfile's packages into the cache (and the workspace), from the index only
  t_run sbxctl run -p $RECIPE --workspace "$D/ws" -- sh -c \
    "python3 -m pip download --no-deps --require-hashes -r requirements.txt -d ~/.cache/wheels --index-url http://$TN_SRV:$PORT/simple/ --trusted-host $TN_SRV --disable-pip-version-check -q && ls ~/.cache/wheels"
  assert_eq 0 "$T_RC" "phase 1 (install)"
  assert_contains "$T_OUT" "sbxdemo-1.0-py3-none-any.whl"
  # phase 2: no network; the cache read-only; the lockfile's hashes checked again
  t_run sbxctl run -p $RECIPE --network none --cache-ro wheels --workspace "$D/ws" -- sh -c \
    "python3 -m pip install --no-index --find-links ~/.cache/wheels --require-hashes -r requirements.txt --target deps --disable-pip-version-check -q && python3 -c 'import sys; sys.path.insert(0, \"deps\"); import sbxdemo; print(\"answer\", sbxdemo.ANSWER)'; python3 -m pip download sbxdemo --index-url http://$TN_SRV:$PORT/simple/ -d /tmp/x --disable-pip-version-check -q --retries 0 --timeout 3 >/dev/null 2>&1; echo \"net=\$?\"; echo poison > ~/.cache/wheels/sbxdemo-1.0-py3-none-any.whl; echo \"poison=\$?\""
  assert_eq 0 "$T_RC" "phase 2 (run)"
  assert_contains "$T_OUT" "answer 42" "the installed package runs"
  assert_match "$T_OUT" "net=[1-9]" "the index is out of reach"
  assert_contains "$T_OUT" "poison=2" "the cache cannot be poisoned"
  t_run sbxctl run -p $RECIPE --network none -- sh -c 'sha256sum ~/.cache/wheels/sbxdemo-1.0-py3-none-any.whl'
  assert_contains "$T_OUT" "$digest" "the cached wheel is the one the lockfile names"
  assert_clean
  t_pass
fi

t_summary
