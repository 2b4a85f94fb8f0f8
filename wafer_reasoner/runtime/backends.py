"""The planner backend: the embedded engine (default) or an OpenAI-compatible inference server.

    planner = remote_planner(settings, fallback=embedded)       # backend "openai" (remote/planner.py)
    call = QueryCall(planner)                                   # one query's view: what the backend reported
    result = answer(call, scene, text, limits, now_s=...)       # the same query path for both backends
    result = with_backend_report(result, call.report)           # remote_ms and the backend object on record

Both backends are a ``Planner``: ``generate(scene, utterance)`` returning plan text with token counts and
times. ``ReasonerCore.plan`` runs every query through ``QueryCall`` and ``query.answer``, so a remote plan is
parsed, checked and verified exactly as an embedded one. A remote query's measured wall time (``remote_ms``:
network and server, retries included) goes into ``timings_ms`` beside the emulated time; ``backend`` in the
record says who answered (``answered_by``: ``openai``, or ``embedded`` when the server could not be reached
and the fallback planned), the attempts and the error, if any.
"""

from __future__ import annotations

import os
from typing import Protocol

from wafer_reasoner.remote.planner import FALLBACKS, REMOTE, RemotePlanner, RemoteSettings

EMBEDDED = "embedded"
BACKENDS = (EMBEDDED, REMOTE)


class Planner(Protocol):
    def generate(self, scene, utterance: str): ...


class QueryCall:
    """A planner for one query: passes ``generate`` through and keeps the backend's report (or its error's).
    Made per query, so the worker thread and the node's thread never share one."""

    def __init__(self, planner) -> None:
        self.planner = planner
        self.report: dict | None = None

    def generate(self, scene, utterance: str):
        try:
            generation = self.planner.generate(scene, utterance)
        except Exception as error:
            self.report = getattr(error, "report", None)
            raise
        self.report = getattr(generation, "report", None)
        return generation


def with_backend_report(result, report: dict | None):
    """``result`` with the backend's report on record and its measured ``remote_ms`` among the timings."""
    if not report:
        return result
    return result.with_backend(report).with_timing("remote_ms", report.get("remote_ms", float("nan")))


def remote_settings(values: dict, environ=None) -> RemoteSettings:
    """RemoteSettings from the node's ``backend_*`` parameters (``base_url`` included). The API key is read from
    the environment variable ``api_key_env`` names (empty: none sent); it is never a parameter itself."""
    environ = os.environ if environ is None else environ
    key_name = values.get("api_key_env", "")
    return RemoteSettings(base_url=values["base_url"], model=values.get("model", ""),
                          api_key=environ.get(key_name, "") if key_name else "", api_key_env=key_name,
                          timeout_s=float(values.get("timeout_s", 10.0)), retries=int(values.get("retries", 1)),
                          constraint=values.get("constraint", "auto"), max_tokens=int(values.get("max_tokens", 256)))


def remote_planner(settings: RemoteSettings, *, fallback=None, fallback_mode: str = EMBEDDED,
                   model_dir=None) -> RemotePlanner:
    """The remote backend; ``fallback`` (the embedded planner) answers when the server cannot be reached and
    ``fallback_mode`` is ``embedded``."""
    if fallback_mode not in FALLBACKS:
        raise ValueError(f"fallback must be one of {FALLBACKS}, got {fallback_mode!r}")
    return RemotePlanner(settings, fallback=fallback if fallback_mode == EMBEDDED else None, model_dir=model_dir)


def describe(planner) -> str:
    """What a start-up log line says about the backend: "" for the embedded planner."""
    if not isinstance(planner, RemotePlanner):
        return ""
    settings = planner.settings
    key = f", API key from ${settings.api_key_env}" if settings.api_key_env else ""
    missing = " (NOT SET: requests go without a key)" if key and not settings.api_key else ""
    return (f"; planning with {settings.base_url} (model {settings.model or 'listed first'}, constraint "
            f"{settings.constraint}, timeout {settings.timeout_s:g} s, fallback "
            f"{'embedded' if planner.fallback is not None else 'none'}{key}{missing})")


def backend_status(planner) -> tuple:
    """(problems, {diagnostic name: value}) of the planner backend, for /diagnostics."""
    if not isinstance(planner, RemotePlanner):
        return [], {"backend": EMBEDDED}
    status = planner.status()
    problems = []
    if status["last_error"]:
        fallback = " (the embedded planner answers)" if planner.fallback is not None else ""
        problems.append(f"planning server {status['base_url']}: {status['last_error']}{fallback}")
    return problems, {f"backend_{name}" if name != "backend" else name: value for name, value in status.items()}
