"""The remote planner: the same ``generate(scene, utterance)`` as the embedded engine, answered by an
OpenAI-compatible inference server.

    planner = RemotePlanner(RemoteSettings(base_url="http://127.0.0.1:8080/v1"), fallback=embedded_model)
    generation = planner.generate(scene, "bring me the red cup")   # a RemoteGeneration, or a BackendError

The request carries the prompt of ``remote/prompt.py`` and, where the server supports it, the action language
as a constraint derived from ``planner/syntax.py`` (``planner/output_grammar.py``), limited to the scene's ids:

- ``gbnf``: llama.cpp's ``grammar`` field (llama.cpp's server and llama-cpp-python);
- ``vllm_regex`` / ``vllm_grammar``: vLLM's ``guided_regex`` / ``guided_grammar`` (GBNF, read by xgrammar);
- ``json_schema``: OpenAI's ``response_format`` (Cerebras, SGLang, others): ``{"plan": "..."}``;
- ``json_object``: the same schema in the form llama-cpp-python's server reads (``{"type": "json_object",
  "schema": ...}``; it refuses ``json_schema`` with HTTP 500);
- ``none``: the prompt alone; ``auto``: by the ``owned_by`` of GET /models (llama.cpp: gbnf, vLLM: vllm_regex,
  anything else: json_schema).

What comes back is plan text for ``query.answer``, which parses and verifies it like the embedded planner's.
A server that cannot be reached (after its retries) hands the query to ``fallback`` when one is given (the
embedded planner); a timeout or an unusable answer is never retried elsewhere: the query is refused.
``report`` on a generation or a BackendError says which backend answered, in how long and why.
"""

from __future__ import annotations

import json
import math
import threading
from dataclasses import dataclass, field

from wafer_reasoner.planner import output_grammar
from wafer_reasoner.remote.client import BackendError, BackendProtocolError, BackendUnavailable, OpenAIClient
from wafer_reasoner.remote.prompt import chat_messages

CONSTRAINTS = ("auto", "gbnf", "vllm_regex", "vllm_grammar", "json_schema", "json_object", "none")
JSON_CONSTRAINTS = ("json_schema", "json_object")  # the plan comes back in the schema's field
FALLBACKS = ("embedded", "none")
OWNERS = {"llamacpp": "gbnf", "me": "gbnf", "vllm": "vllm_regex"}  # owned_by of GET /models -> constraint
REMOTE = "openai"  # the backend's name in parameters and plan records
# what a fallback answer keeps of the embedded planner's generation
_COPIED = ("text", "tokens", "prompt_tokens", "total_ms", "tokens_per_s", "prefill_ms", "decode_ms",
           "candidate_texts", "candidate_tokens", "candidate_scores", "candidate_finished", "candidates", "score")


@dataclass(frozen=True)
class RemoteSettings:
    base_url: str
    model: str = ""  # "" = the first model GET /models lists
    api_key: str = field(default="", repr=False)  # from the environment variable api_key_env; never a file
    api_key_env: str = ""  # the name of that variable (what logs may show)
    timeout_s: float = 10.0
    retries: int = 1
    constraint: str = "auto"
    max_tokens: int = 256
    temperature: float = 0.0

    def __post_init__(self) -> None:
        if self.constraint not in CONSTRAINTS:
            raise ValueError(f"constraint must be one of {CONSTRAINTS}, got {self.constraint!r}")
        if not isinstance(self.max_tokens, int) or self.max_tokens < 1:
            raise ValueError(f"max_tokens must be a whole number >= 1, got {self.max_tokens!r}")


@dataclass(frozen=True)
class RemoteGeneration:
    """What ``query.answer`` reads of a generation; the server's split of prefill and decode is not known."""

    text: str
    tokens: int
    prompt_tokens: int
    total_ms: float
    tokens_per_s: float
    report: dict
    prefill_ms: float = math.nan
    decode_ms: float = math.nan
    # best-of-N rows, as the embedded engine gives them (a server's answer is one row: nothing to choose)
    candidate_texts: tuple = ()
    candidate_tokens: tuple = ()
    candidate_scores: tuple = ()
    candidate_finished: tuple = ()
    candidates: int = 1
    score: float = 0.0


def request_body(settings: RemoteSettings, model: str, constraint: str, scene, utterance: str) -> dict:
    """The chat-completion request of one query."""
    body = {"model": model, "messages": chat_messages(scene, utterance), "max_tokens": settings.max_tokens,
            "temperature": settings.temperature, "stream": False}
    if constraint == "gbnf":
        body["grammar"] = output_grammar.gbnf(scene)
    elif constraint == "vllm_regex":
        body["guided_regex"] = output_grammar.regex(scene)
    elif constraint == "vllm_grammar":
        body["guided_grammar"] = output_grammar.gbnf(scene)
    elif constraint == "json_schema":
        body["response_format"] = {"type": "json_schema", "json_schema": {
            "name": "plan", "strict": True, "schema": output_grammar.json_schema(scene)}}
    elif constraint == "json_object":
        body["response_format"] = {"type": "json_object", "schema": output_grammar.json_schema(scene)}
    return body


def plan_text(content: str, constraint: str) -> str:
    """The plan in a reply: the ``plan`` field under a JSON schema, else the text itself (whitespace trimmed).
    Anything else is passed on as it is, for the parser to reject."""
    if constraint in JSON_CONSTRAINTS:
        try:
            decoded = json.loads(content)
        except ValueError:
            return content.strip()
        if isinstance(decoded, dict) and isinstance(decoded.get(output_grammar.PLAN_FIELD), str):
            return decoded[output_grammar.PLAN_FIELD].strip()
    return content.strip()


class RemotePlanner:
    """A planner model for ``query.answer`` backed by an inference server. Called by one planning thread."""

    backend = REMOTE

    def __init__(self, settings: RemoteSettings, *, fallback=None, client: OpenAIClient | None = None,
                 model_dir=None) -> None:
        self.settings = settings
        self.client = client or OpenAIClient(settings.base_url, api_key=settings.api_key,
                                             timeout_s=settings.timeout_s, retries=settings.retries)
        self.fallback = fallback
        self.model_dir = model_dir if model_dir is not None else getattr(fallback, "model_dir", "")
        self._server: tuple | None = None  # (model, constraint) once known
        self._lock = threading.Lock()
        self.counts = dict.fromkeys(("requests", "answered", "timeout", "unavailable", "protocol", "fallbacks"), 0)
        self.last_remote_ms = math.nan
        self.last_error = ""

    def generate(self, scene, utterance: str) -> RemoteGeneration:
        self.counts["requests"] += 1
        try:
            model, constraint = self._resolve()
            reply = self.client.chat(request_body(self.settings, model, constraint, scene, utterance))
        except BackendError as error:
            self._failed(error)
            if isinstance(error, BackendUnavailable) and self.fallback is not None:
                return self._fall_back(scene, utterance, error)
            error.report = self._report(error.remote_ms, error.attempts, error=f"{error.kind}: {error}")
            raise
        self.counts["answered"] += 1
        self.last_remote_ms, self.last_error = reply.remote_ms, ""
        seconds = reply.remote_ms / 1000.0
        return RemoteGeneration(
            text=plan_text(reply.content, constraint), tokens=reply.completion_tokens,
            prompt_tokens=reply.prompt_tokens, total_ms=reply.remote_ms,
            tokens_per_s=reply.completion_tokens / seconds if seconds > 0 else 0.0,
            report=self._report(reply.remote_ms, reply.attempts, model=reply.model or model, constraint=constraint,
                                finish_reason=reply.finish_reason))

    def status(self) -> dict:
        """What /diagnostics shows about the backend."""
        model, constraint = self._server or (self.settings.model, self.settings.constraint)
        return {"backend": self.backend, "base_url": self.client.base_url, "model": model, "constraint": constraint,
                "fallback": "embedded" if self.fallback is not None else "none",
                "last_remote_ms": self.last_remote_ms, "last_error": self.last_error,
                **{f"requests_{name}" if name != "requests" else name: count for name, count in self.counts.items()}}

    def _resolve(self) -> tuple:
        """(model, constraint): asked of GET /models once when either is left to the server."""
        with self._lock:
            if self._server is None:
                model, constraint = self.settings.model, self.settings.constraint
                if not model or constraint == "auto":
                    listed = self.client.models()
                    if not listed and not model:
                        raise BackendProtocolError("GET /models lists no model; set the backend model")
                    first = listed[0] if listed else {}
                    model = model or str(first.get("id", ""))
                    if constraint == "auto":
                        constraint = OWNERS.get(str(first.get("owned_by", "")).lower(), "json_schema")
                self._server = (model, constraint)
            return self._server

    def _failed(self, error: BackendError) -> None:
        self.counts[error.kind] = self.counts.get(error.kind, 0) + 1
        self.last_remote_ms, self.last_error = error.remote_ms, f"{error.kind}: {error}"

    def _fall_back(self, scene, utterance: str, error: BackendError):
        self.counts["fallbacks"] += 1
        generation = self.fallback.generate(scene, utterance)
        report = self._report(error.remote_ms, error.attempts, answered_by="embedded",
                              error=f"{error.kind}: {error}")
        return RemoteGeneration(report=report, **{name: getattr(generation, name) for name in _COPIED
                                                  if hasattr(generation, name)})

    def _report(self, remote_ms: float, attempts: int, **extra) -> dict:
        return {"backend": self.backend, "answered_by": self.backend, "base_url": self.client.base_url,
                "remote_ms": remote_ms, "attempts": attempts} | extra

