#!/usr/bin/env bash
# Create or update .venv/ in the repository root: pinned ROS 2 Kilted wheels + deps, then wafer_reasoner itself.
#
#   scripts/setup_venv.sh            # idempotent; a second run with nothing changed takes about a second
#   scripts/setup_venv.sh --train    # also the [train] extra (torch, onnx) from requirements-train.txt
#   PYTHON=python3.12 scripts/setup_venv.sh
#
# Steps, each skipped when its stamp in .venv/ still matches:
#   1. venv with the system python3 (3.11+); recreated if that python's version changed;
#   2. pip install -r requirements.txt -c constraints.txt   (stamp: hash of both files + python version);
#   3. pip install . (non-editable)   (stamp: list of package source files with sizes and mtimes, so an
#      edited, added or deleted file triggers a reinstall);
#   4. .venv/wafer_env.sh (always rewritten): source it to run anything ROS from this venv;
#   5. scripts/build_test_interfaces.sh: the test-only interface packages of test/interfaces/ (rosidl, CMake),
#      built into .venv once (stamp: hash of their sources).
# Concurrent runs (several people, one working tree) serialise on a lock on .venv/.
#
# Changing a pin: edit requirements*.txt, then regenerate constraints.txt in a scratch venv with
#   pip install -r requirements.txt -r requirements-train.txt && pip freeze --all | grep -v '^pip=='
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$REPO/.venv"
PY="${PYTHON:-python3}"
WITH_TRAIN=0
for arg in "$@"; do
  case "$arg" in
    --train) WITH_TRAIN=1 ;;
    -h|--help) sed -n '2,18p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "setup_venv.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

say() { echo "[setup_venv] $*"; }

command -v "$PY" >/dev/null || { echo "setup_venv.sh: '$PY' not found; install Python 3.11+ or set PYTHON" >&2; exit 1; }
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "setup_venv.sh: $("$PY" --version 2>&1) is too old; need Python 3.11+ (set PYTHON=...)" >&2
  exit 1
fi
PY_VERSION="$("$PY" -c 'import platform; print(platform.python_version())')"

mkdir -p "$VENV"
exec 9<"$VENV"  # lock the directory itself: venv --clear empties it but keeps it
flock 9

# 1. the venv -------------------------------------------------------------------------------------------------
if [[ ! -x "$VENV/bin/python" ]] || [[ "$("$VENV/bin/python" -c 'import platform; print(platform.python_version())' 2>/dev/null)" != "$PY_VERSION" ]]; then
  say "creating .venv with $PY ($PY_VERSION)"
  "$PY" -m venv --clear "$VENV"
fi
VPY="$VENV/bin/python"
pip_install() { "$VPY" -m pip install --disable-pip-version-check --no-input "$@"; }

# 2. pinned dependencies ----------------------------------------------------------------------------------------
deps_hash() {
  {
    echo "$PY_VERSION"
    cat "$REPO/requirements.txt" "$REPO/constraints.txt"
    if [[ "$1" == 1 ]]; then cat "$REPO/requirements-train.txt"; fi
  } | sha256sum | cut -d' ' -f1
}
install_deps() {  # $1: stamp name, $2: 0/1 with train, rest: -r files
  local stamp="$VENV/.wafer_$1.stamp" want
  want="$(deps_hash "$2")"
  shift 2
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    return 0
  fi
  say "installing pinned dependencies ($*)"
  local args=()
  for file in "$@"; do args+=(-r "$REPO/$file"); done
  pip_install --quiet "${args[@]}" -c "$REPO/constraints.txt"
  echo "$want" >"$stamp"
}
install_deps deps 0 requirements.txt
if [[ "$WITH_TRAIN" == 1 ]]; then
  install_deps train 1 requirements.txt requirements-train.txt
fi

# 3. the package itself -----------------------------------------------------------------------------------------
src_fingerprint() {
  (
    cd "$REPO"
    local paths=()
    for path in setup.py setup.cfg package.xml resource wafer_reasoner launch config rviz; do
      [[ -e "$path" ]] && paths+=("$path")
    done
    find "${paths[@]}" -type f ! -path '*/__pycache__/*' ! -name '*.pyc' -printf '%p %s %T@\n' | LC_ALL=C sort
  ) | sha256sum | cut -d' ' -f1
}
pkg_stamp="$VENV/.wafer_pkg.stamp"
want="$(src_fingerprint)"
if [[ ! -f "$pkg_stamp" || "$(cat "$pkg_stamp")" != "$want" || ! -e "$VENV/share/wafer_reasoner/package.xml" ]]; then
  say "installing wafer_reasoner into .venv"
  # setuptools builds in the source tree; drop its leftovers so a deleted source file cannot linger in the wheel
  rm -rf "$REPO/build/lib" "$REPO"/build/bdist.* "$REPO/build/ament_lib_wrappers" "$REPO/wafer_reasoner.egg-info"
  pip_install --quiet --no-deps --no-build-isolation --force-reinstall "$REPO"
  rm -rf "$REPO/build/lib" "$REPO"/build/bdist.* "$REPO/build/ament_lib_wrappers" "$REPO/wafer_reasoner.egg-info"
  rmdir "$REPO/build" 2>/dev/null || true
  echo "$want" >"$pkg_stamp"
fi

# 4. the environment file ---------------------------------------------------------------------------------------
# The default domain id is derived from the checkout path: stable across shells (nodes started in two
# terminals of one checkout meet), different between checkouts. Tests pick their own random ids.
default_domain=$(( $(printf '%s' "$REPO" | cksum | cut -d' ' -f1) % 100 + 1 ))
cat >"$VENV/wafer_env.sh.tmp" <<EOF
# Generated by scripts/setup_venv.sh; source it (bash/zsh/sh) to use ROS 2 and wafer_reasoner from this venv.
export VIRTUAL_ENV="$VENV"
case ":\${PATH}:" in *":$VENV/bin:"*) ;; *) export PATH="$VENV/bin:\${PATH}" ;; esac
export AMENT_PREFIX_PATH="$VENV"
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
export RMW_IMPLEMENTATION=rmw_fastrtps_cpp
export ROS_DOMAIN_ID="\${ROS_DOMAIN_ID:-$default_domain}"
EOF
mv "$VENV/wafer_env.sh.tmp" "$VENV/wafer_env.sh"

# 5. test-only interfaces -----------------------------------------------------------------------------------------
bash "$REPO/scripts/build_test_interfaces.sh"
say "ready: source .venv/wafer_env.sh"
