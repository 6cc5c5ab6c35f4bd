# tests/integration/pool.sh - the warm pool's helpers (sourced by test-49 and test-32, after sbx.sh). The
# sourcing file sets PROF, the pool's profile, and may set COLD, a profile of its own without a pool.

# write_profile NAME SIZE [DESCRIPTION]: a profile without network, POOL_WALL_TIME of wall time (4s),
# whose runs may lower memory, tasks and CPU
write_profile() {
  cat > "$RUNPROF/$1.json" <<EOF
{
  "version": 1,
  "description": "${3:-sbx test: a warm pool}",
  "network": { "mode": "none" },
  "resources": { "memory": "512M", "tasks": 64, "cpu": "100%", "wall_time": "${POOL_WALL_TIME:-4s}" },
  "pool": { "size": $2 },
  "request": { "memory": { "min": "16M" }, "tasks": { "min": 4 }, "cpu": { "min": "10%" },
               "wall_time": { "min": "1s" } }
}
EOF
}

# the profile's pooled units (loaded), and those whose helper waits for a run
pool_units() {
  systemctl list-units --all --no-legend --plain "sbx-$PROF-*.service" | grep 'sbx pool unit' | awk '{print $1}'
}
pool_waiting() {
  local u
  for u in $(pool_units); do
    [ "$(systemctl show -P StatusText "$u" 2>/dev/null)" = "waiting for a run" ] && echo "$u"
  done
  true
}
# wait_pool N: until exactly N units wait (max ~120 s: the VM testbed is slow)
wait_pool() {
  local end=$((SECONDS + 120))
  while [ "$SECONDS" -lt "$end" ]; do
    if [ "$(pool_waiting | wc -l)" = "$1" ] && [ "$(pool_units | wc -l)" = "$1" ]; then
      sleep 0.5 # sbxd reads the helper's READY a moment after the helper says so to systemd
      return 0
    fi
    sleep 0.2
  done
  _t_err "not $1 units waiting: $(pool_units | tr '\n' ' ') (waiting: $(pool_waiting | tr '\n' ' '))"
  return 1
}
unit_gone() {   # UNIT: until systemd forgot it (max ~30 s)
  local i
  for i in $(seq 300); do
    [ "$(systemctl show -P LoadState "$1" 2>/dev/null)" = not-found ] && return 0
    sleep 0.1
  done
  return 1
}

# the profiles PROF and COLD gone, and systemd told (also at exit: t_on_exit pool_remove_profiles)
pool_remove_profiles() {
  rm -f "$RUNPROF/$PROF.json" ${COLD:+"$RUNPROF/$COLD.json"}
  rmdir "$RUNPROF" /run/sbx 2>/dev/null
  systemctl daemon-reload
}
# pool_off: pool.size 0, the waiting units gone, then the profiles; nothing of sbx is left
pool_off() {
  write_profile "$PROF" 0
  assert_rc 0 sbxctl profile reload
  wait_pool 0
  pool_remove_profiles
  assert_clean "after the pool"
}
