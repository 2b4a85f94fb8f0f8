"""A small client for the OpenAI-compatible HTTP API (vLLM, SGLang, llama.cpp's server, Cerebras' cloud, ...).

    client = OpenAIClient("http://127.0.0.1:8080/v1", api_key=os.environ.get(name, ""), timeout_s=10.0, retries=1)
    client.models()                      # GET {base_url}/models: [{"id": ..., "owned_by": ...}, ...]
    reply = client.chat(body)            # POST {base_url}/chat/completions: a ChatReply

Standard library only (``http.client``): the remote backend adds no dependency to the install. Every call has
one deadline, ``timeout_s`` from its start, retries included: each socket operation waits at most the time
left. Failures are typed, each with the wall time spent (``remote_ms``) and the attempts made:

- ``BackendTimeout``: no answer before the deadline (never retried: the time is spent);
- ``BackendUnavailable``: the connection failed (refused, reset, no route, name unknown) or the server answered
  429 or 5xx, on every attempt; retried ``retries`` times, ``backoff_s`` apart, while time is left;
- ``BackendProtocolError``: the server answered something that is no chat completion (4xx, not JSON, no
  ``choices``, a body over ``MAX_BODY_BYTES``).
"""

from __future__ import annotations

import http.client
import json
import math
import socket
import time
import urllib.parse
from dataclasses import dataclass

MAX_BODY_BYTES = 1 << 20  # an answer longer than this is no plan
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
USER_AGENT = "wafer-reasoner-remote/1"


class BackendError(RuntimeError):
    """The inference server gave no usable answer; ``spoken`` is what the robot says, ``report`` goes on record."""

    kind = "error"
    spoken = "My planning server failed, so I won't move."

    def __init__(self, message: str, *, remote_ms: float = math.nan, attempts: int = 0) -> None:
        super().__init__(message)
        self.remote_ms = remote_ms
        self.attempts = attempts
        self.report: dict | None = None  # set by the planner: what the plan record says about the backend


class BackendTimeout(BackendError):
    kind = "timeout"
    spoken = "My planning server did not answer in time, so I won't move."


class BackendUnavailable(BackendError):
    kind = "unavailable"
    spoken = "I can't reach my planning server, so I won't move."


class BackendProtocolError(BackendError):
    kind = "protocol"
    spoken = "My planning server sent something I can't use, so I won't move."


@dataclass(frozen=True)
class ChatReply:
    content: str  # choices[0].message.content
    prompt_tokens: int  # usage.prompt_tokens (0 when the server does not say)
    completion_tokens: int  # usage.completion_tokens (0 when the server does not say)
    finish_reason: str
    model: str
    remote_ms: float  # measured wall time of the call, retries included
    attempts: int


def parse_base_url(base_url: str) -> urllib.parse.SplitResult:
    """``http(s)://host[:port][/path]``; ValueError naming what is wrong."""
    parts = urllib.parse.urlsplit(str(base_url).strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"base_url must look like http://host:port/v1, got {base_url!r}")
    if parts.query or parts.fragment:
        raise ValueError(f"base_url must not have a query or fragment, got {base_url!r}")
    parts.port  # noqa: B018 - raises ValueError for a port that is no number
    return parts


class OpenAIClient:
    def __init__(self, base_url: str, *, api_key: str = "", timeout_s: float = 10.0, retries: int = 1,
                 backoff_s: float = 0.05, clock=time.perf_counter, sleep=time.sleep) -> None:
        if not timeout_s > 0 or not math.isfinite(timeout_s):
            raise ValueError(f"timeout_s must be a positive number of seconds, got {timeout_s!r}")
        if not isinstance(retries, int) or retries < 0:
            raise ValueError(f"retries must be a whole number >= 0, got {retries!r}")
        self.url = parse_base_url(base_url)
        self.base_url = urllib.parse.urlunsplit(self.url).rstrip("/")
        self.api_key, self.timeout_s, self.retries, self.backoff_s = api_key, float(timeout_s), retries, backoff_s
        self._clock, self._sleep = clock, sleep

    def models(self) -> list:
        """The server's models (``data`` of GET /models)."""
        reply, _, _ = self._call("GET", "models", None)
        data = reply.get("data")
        if not isinstance(data, list):
            raise BackendProtocolError("GET /models answered without a 'data' list")
        return [model for model in data if isinstance(model, dict)]

    def post(self, path: str, body: dict) -> dict:
        """POST {base_url}/``path`` with a JSON body; the decoded JSON answer (a server's extras)."""
        return self._call("POST", path, body)[0]

    def chat(self, body: dict) -> ChatReply:
        """POST /chat/completions with ``body`` (model, messages, max_tokens, the constraint, ...)."""
        reply, remote_ms, attempts = self._call("POST", "chat/completions", body)
        try:
            choice = reply["choices"][0]
            content = choice["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise BackendProtocolError("the answer has no choices[0].message.content", remote_ms=remote_ms,
                                       attempts=attempts) from None
        if not isinstance(content, str):
            raise BackendProtocolError("choices[0].message.content is not text", remote_ms=remote_ms,
                                       attempts=attempts)
        usage = reply.get("usage") if isinstance(reply.get("usage"), dict) else {}
        return ChatReply(content=content, prompt_tokens=_count(usage.get("prompt_tokens")),
                         completion_tokens=_count(usage.get("completion_tokens")),
                         finish_reason=str(choice.get("finish_reason") or ""), model=str(reply.get("model") or ""),
                         remote_ms=remote_ms, attempts=attempts)

    # ---- one call, retried ------------------------------------------------------------------------------------

    def _call(self, method: str, path: str, body) -> tuple:
        """(decoded JSON object, wall ms, attempts); raises a BackendError."""
        started = self._clock()
        deadline = started + self.timeout_s
        payload = None if body is None else json.dumps(body).encode("utf-8")
        attempts = 0
        while True:
            attempts += 1
            try:
                status, data = self._once(method, path, payload, deadline - self._clock())
            except BackendError as error:
                error.remote_ms, error.attempts = (self._clock() - started) * 1000.0, attempts
                retry = isinstance(error, BackendUnavailable) and attempts <= self.retries
                if not retry or self._clock() + self.backoff_s >= deadline:
                    raise
                self._sleep(self.backoff_s * attempts)
                continue
            remote_ms = (self._clock() - started) * 1000.0
            return _decoded(status, data, remote_ms, attempts), remote_ms, attempts

    def _once(self, method: str, path: str, payload, left_s: float) -> tuple:
        if left_s <= 0:
            raise BackendTimeout(f"no answer within {self.timeout_s:g} s")
        connection_type = http.client.HTTPSConnection if self.url.scheme == "https" else http.client.HTTPConnection
        connection = connection_type(self.url.hostname, self.url.port, timeout=left_s)
        headers = {"Content-Type": "application/json", "Accept": "application/json", "User-Agent": USER_AGENT}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        try:
            connection.request(method, f"{self.url.path.rstrip('/')}/{path}", body=payload, headers=headers)
            response = connection.getresponse()
            data = response.read(MAX_BODY_BYTES + 1)
        except (TimeoutError, socket.timeout):
            raise BackendTimeout(f"no answer from {self.base_url} within {self.timeout_s:g} s") from None
        except (OSError, http.client.HTTPException) as error:  # refused, reset, unreachable, closed mid-answer
            raise BackendUnavailable(f"{self.base_url}: {type(error).__name__}: {error}") from None
        finally:
            connection.close()
        if response.status in RETRY_STATUS:
            raise BackendUnavailable(f"{self.base_url} answered HTTP {response.status}: {_snippet(data)}")
        return response.status, data


def _decoded(status: int, data: bytes, remote_ms: float, attempts: int) -> dict:
    def fail(why: str) -> BackendProtocolError:
        return BackendProtocolError(why, remote_ms=remote_ms, attempts=attempts)

    if len(data) > MAX_BODY_BYTES:
        raise fail(f"the answer is longer than {MAX_BODY_BYTES} bytes")
    if not 200 <= status < 300:
        raise fail(f"HTTP {status}: {_snippet(data)}")
    try:
        decoded = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise fail(f"the answer is not JSON: {_snippet(data)}") from None
    if not isinstance(decoded, dict):
        raise fail("the answer is not a JSON object")
    return decoded


def _snippet(data: bytes, limit: int = 200) -> str:
    return data[:limit].decode("utf-8", "replace").replace("\n", " ")


def _count(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
