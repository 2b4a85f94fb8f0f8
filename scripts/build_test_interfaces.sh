#!/usr/bin/env bash
# Build the test-only interface packages in test/interfaces/ (CMake + rosidl) into .venv, once: make setup runs
# this as its last step and skips it while the stamp matches. nav2_msgs is not on PyPI; wafer_test_nav2_msgs has
# the same NavigateToPose action under a test-only name, so the tests run a real action server and client.
#
#   scripts/build_test_interfaces.sh            # needs cmake and a C/C++ compiler; else says so and exits 0
#
# The ROS wheels bake their build machine's Python include paths into the rosidl Python generator's CMake
# exports (/opt/python/cp311-cp311/...); they are pointed at this venv's Python and numpy first (idempotent).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$REPO/.venv"
VPY="$VENV/bin/python"
say() { echo "[build_test_interfaces] $*"; }

for tool in cmake cc c++; do
  if ! command -v "$tool" >/dev/null; then
    say "no $tool here: the Nav2 action tests will skip (apt-get install cmake g++ to build them)"
    exit 0
  fi
done

stamp="$VENV/.wafer_test_interfaces.stamp"
want="$( (cd "$REPO" && find test/interfaces -type f | LC_ALL=C sort | xargs sha256sum; "$VPY" --version) | sha256sum | cut -d' ' -f1)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  exit 0
fi

py_include="$("$VPY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
numpy_include="$("$VPY" -c 'import numpy; print(numpy.get_include())')"
for export in "$VENV"/share/*/cmake/export_*__rosidl_generator_pyExport.cmake; do
  sed -i "s#/opt/python/cp311-cp311/include/python3.11#$py_include#g; \
s#/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include#$numpy_include#g" "$export"
done

export AMENT_PREFIX_PATH="$VENV"
for package in "$REPO"/test/interfaces/*/; do
  name="$(basename "$package")"
  build="$VENV/build/$name"
  say "building $name into .venv (about a minute, once)"
  rm -rf "$build"
  mkdir -p "$VENV/build"
  cmake -S "$package" -B "$build" -DCMAKE_INSTALL_PREFIX="$VENV" -DCMAKE_PREFIX_PATH="$VENV" \
    -DPython3_EXECUTABLE="$VPY" -DBUILD_TESTING=OFF >"$build.log" 2>&1 \
    && cmake --build "$build" -j 2 >>"$build.log" 2>&1 \
    && cmake --install "$build" >>"$build.log" 2>&1 \
    || { say "building $name failed; see $build.log"; exit 1; }
done
echo "$want" >"$stamp"
say "ready"
