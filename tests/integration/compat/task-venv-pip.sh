#!/usr/bin/env bash
# python3 -m venv and pip, no network: a venv that sees the system's pip, setuptools and wheel
# installs a local package from source (pip --no-index --no-build-isolation: pip builds its wheel
# with the system's setuptools and installs it); its console script and package data work.
# COMPAT_FULL=1 adds (slow under emulation: each pip start takes tens of seconds there): building
# the wheel on its own, a plain venv with its own pip from ensurepip (what `python3 -m venv` does by
# default) installing that wheel, pip failing cleanly when an index cannot be reached, uninstall.
. "$(dirname "$0")/lib-task.sh"
# (find_spec does not import: importing pip and setuptools takes seconds under emulation)
$PY -c 'import importlib.util as u, sys; sys.exit(any(u.find_spec(m) is None for m in ("ensurepip", "venv", "pip", "setuptools", "wheel")))' \
  || fail "python3-venv, python3-pip, python3-setuptools or python3-wheel not installed"
# pip must not reach any index, whatever the environment says
unset PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_FIND_LINKS
export PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_CONFIG_FILE=/dev/null
cp -r "$TASK_DIR/pypkg" pkg || fail "copy the package"

step "a venv with the system's site packages"
run $PY -m venv --system-site-packages --without-pip v1
expect "True" "$(v1/bin/python -c 'import sys; print(sys.prefix != sys.base_prefix)')" "v1 is a venv"
step "pip installs the local package from source"
run v1/bin/python -m pip install -q --no-build-isolation ./pkg
out=$(v1/bin/sbx-compat-demo) || fail "the console script failed"
expect "hello from sbx-compat-demo from $(pwd)/v1" "$out" "console script output"
expect "1.0.0 $(pwd)/v1" "$(v1/bin/python -c 'import sys, sbx_compat_demo as m; print(m.__version__, sys.prefix)')" "version and prefix"
[ -n "$(compgen -G 'v1/lib/python3*/site-packages/sbx_compat_demo-1.0.0.dist-info/RECORD')" ] || fail "no dist-info in the venv"
if $PY -c 'import sbx_compat_demo' 2>/dev/null; then fail "the package leaked out of the venv"; fi

if [ "${COMPAT_FULL:-0}" = 1 ]; then
  step "build a wheel"
  run v1/bin/python -m pip wheel -q --no-build-isolation --no-deps -w dist ./pkg
  whl=$(ls dist/sbx_compat_demo-1.0.0-*.whl 2>/dev/null | head -n 1)
  [ -n "$whl" ] || fail "no wheel in dist/: $(ls dist 2>&1)"
  step "a plain venv with pip from ensurepip installs the wheel"
  run $PY -m venv v2
  run v2/bin/pip install -q "$whl"
  expect "hello from sbx-compat-demo from $(pwd)/v2" "$(v2/bin/sbx-compat-demo)" "console script output (wheel)"
  if v2/bin/python -c 'import wheel' 2>/dev/null; then fail "v2 sees the system's site packages"; fi
  step "an index that cannot be reached makes pip fail cleanly"
  out=$(PIP_NO_INDEX=0 v2/bin/pip download -q --no-deps -d dl --index-url http://127.0.0.1:9/simple \
          --retries 0 --timeout 5 no-such-package-sbx 2>&1) && fail "pip downloaded a package from nowhere"
  contains "$out" "No matching distribution" "pip's message"
  step "uninstall"
  run v2/bin/pip uninstall -q -y sbx-compat-demo
  if v2/bin/python -c 'import sbx_compat_demo' 2>/dev/null; then fail "still importable after uninstall"; fi
fi
ok
