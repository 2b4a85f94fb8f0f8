"""The OpenAI-compatible client (remote/client.py) over real loopback sockets: the failures a recording cannot
hold (no answer, refused, hung up, retried 503, an oversized or non-JSON body). Answers recorded from the
real server are replayed in test_remote_planner.py. Nothing here asserts how long anything took, only that a
deadline is kept (the call returns) and that measured time is reported."""

import json
import math

import pytest
from remote_fakes import CLOSE, HANG, LoopbackServer, closed_port

from wafer_reasoner.remote.client import (
    MAX_BODY_BYTES,
    BackendProtocolError,
    BackendTimeout,
    BackendUnavailable,
    OpenAIClient,
    parse_base_url,
)

CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def completion(content: str) -> dict:
    return {"model": "m", "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                       "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}}


@pytest.mark.parametrize("url", ["127.0.0.1:8080/v1", "ftp://host/v1", "http:///v1", "http://h:port/v1",
                                 "http://h/v1?key=1"])
def test_a_bad_base_url_is_refused_with_the_expected_form(url):
    with pytest.raises(ValueError, match="base_url|port"):
        parse_base_url(url)


def test_a_chat_answer_is_read_with_its_usage_and_sent_with_the_key_as_a_bearer_token():
    seen = []

    def answer(method, path, body):
        seen.append((method, path, json.loads(body)))
        return 200, completion("stop()")

    with LoopbackServer(answer) as server:
        client = OpenAIClient(server.base_url, api_key="sk-test", timeout_s=5.0)
        reply = client.chat(CHAT)
    assert (reply.content, reply.prompt_tokens, reply.completion_tokens, reply.finish_reason) == ("stop()", 12, 3,
                                                                                                  "stop")
    assert reply.attempts == 1 and reply.remote_ms > 0
    assert seen == [("POST", "/v1/chat/completions", CHAT)]


def test_the_api_key_travels_only_in_the_authorization_header():
    with LoopbackServer(lambda method, path, body: (200, completion("stop()"))) as server:
        OpenAIClient(server.base_url, api_key="sk-secret", timeout_s=5.0).chat(CHAT)
        OpenAIClient(server.base_url, timeout_s=5.0).chat(CHAT)
    assert server.headers[0]["Authorization"] == "Bearer sk-secret"
    assert "Authorization" not in server.headers[1]  # no key: no header
    assert all(b"sk-secret" not in body for _, _, body in server.requests)


def test_no_answer_before_the_deadline_is_a_timeout_with_the_time_spent_and_no_retry():
    with LoopbackServer(lambda method, path, body: HANG) as server:
        client = OpenAIClient(server.base_url, timeout_s=0.3, retries=3)
        with pytest.raises(BackendTimeout) as caught:
            client.chat(CHAT)
    assert caught.value.attempts == 1 and len(server.requests) == 1  # the time is spent: never retried
    assert caught.value.remote_ms >= 300.0 - 1.0
    assert "did not answer in time" in caught.value.spoken


def test_a_slow_answer_within_the_deadline_is_taken_and_its_time_measured():
    with LoopbackServer(lambda method, path, body: (200, completion("wait(1)"), 0.2)) as server:
        reply = OpenAIClient(server.base_url, timeout_s=5.0).chat(CHAT)
    assert reply.content == "wait(1)" and reply.remote_ms >= 200.0 - 1.0


def test_connection_refused_is_unavailable_after_every_retry():
    client = OpenAIClient(f"http://127.0.0.1:{closed_port()}/v1", timeout_s=5.0, retries=2, backoff_s=0.01)
    with pytest.raises(BackendUnavailable) as caught:
        client.chat(CHAT)
    assert caught.value.attempts == 3 and math.isfinite(caught.value.remote_ms)
    assert "can't reach my planning server" in caught.value.spoken


def test_a_503_is_retried_and_the_next_answer_taken():
    answers = [(503, {"error": "loading model"}), (200, completion("stop()"))]
    with LoopbackServer(lambda method, path, body: answers.pop(0)) as server:
        reply = OpenAIClient(server.base_url, timeout_s=5.0, retries=1, backoff_s=0.01).chat(CHAT)
    assert reply.content == "stop()" and reply.attempts == 2 and len(server.requests) == 2


def test_a_server_that_hangs_up_without_an_answer_is_unavailable():
    with LoopbackServer(lambda method, path, body: CLOSE) as server:
        with pytest.raises(BackendUnavailable):
            OpenAIClient(server.base_url, timeout_s=5.0, retries=0).chat(CHAT)


@pytest.mark.parametrize("status, body, why", [
    (200, b"<html>not json</html>", "not JSON"),
    (200, b"[1, 2]", "not a JSON object"),
    (200, {"choices": []}, "choices"),
    (200, {"choices": [{"message": {"content": 7}}]}, "not text"),
    (200, b"x" * (MAX_BODY_BYTES + 10), "longer than"),
])
def test_an_answer_that_is_no_chat_completion_is_a_protocol_error(status, body, why):
    with LoopbackServer(lambda method, path, request: (status, body)) as server:
        with pytest.raises(BackendProtocolError, match=why):
            OpenAIClient(server.base_url, timeout_s=5.0).chat(CHAT)


def test_models_lists_the_data_of_get_models():
    listing = {"object": "list", "data": [{"id": "a", "owned_by": "vllm"}, "junk"]}
    with LoopbackServer(lambda method, path, body: (200, listing)) as server:
        assert OpenAIClient(server.base_url, timeout_s=5.0).models() == [{"id": "a", "owned_by": "vllm"}]
        assert server.requests[0][:2] == ("GET", "/v1/models")


@pytest.mark.parametrize("timeout_s, retries", [(0.0, 1), (-1.0, 1), (math.inf, 1), (1.0, -1), (1.0, 1.5)])
def test_bad_timeouts_and_retries_are_refused(timeout_s, retries):
    with pytest.raises(ValueError):
        OpenAIClient("http://127.0.0.1:1/v1", timeout_s=timeout_s, retries=retries)
