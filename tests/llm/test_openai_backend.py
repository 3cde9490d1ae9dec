"""The LLM interface over an OpenAI-compatible server: the real httpx client against a local
fake server with the faults real servers show (no JSON mode, LM Studio's json_schema only,
fences and prose around the JSON, thinking blocks, 429, 500, slow answers, bad keys)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from memd.core.errors import LLMBadAnswer, LLMConfigError, LLMError, LLMRetryable
from memd.core.models import Turn
from memd.llm.answers import COMPACT_EXTRACTION_SCHEMA, LLMUsage
from memd.llm.client import LLM
from memd.llm.openai_compat import OpenAIBackend, Pacer, is_local
from tests.fakes.openai_server import FakeOpenAI, chat, chat_json, error, rate_limited, slow

MODEL = "qwen2.5:7b-instruct"
TS = datetime(2026, 3, 4, 9, 30, tzinfo=UTC).timestamp()
TURNS = [
    Turn("ingest", "s1", "t1", "user", "Hi! I'm Sam, I work at ByteDance and use React.", TS),
    Turn("ingest", "s1", "t2", "assistant", "Nice to meet you, Sam!", TS),
]
ANSWER = {
    "memories": [
        {"content": "User's name is Sam", "type": "personal", "importance": 9, "subject": "name"},
        {"content": "User works at ByteDance", "type": "personal", "importance": 8},
        {"content": "User uses React", "type": "skill"},
    ],
    "signals": [],
}


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


def llm(server: FakeOpenAI, **kwargs: object) -> LLM:
    options: dict[str, object] = {"timeout": 5.0, **kwargs}
    return LLM(OpenAIBackend(server.base_url, MODEL, **options))  # type: ignore[arg-type]


def test_json_schema_request_with_examples_and_a_tolerant_read(server: FakeOpenAI) -> None:
    server.enqueue(chat_json(ANSWER, prompt_tokens=900, completion_tokens=80))
    res = llm(server).extract(TURNS, known=["User lives in Berlin"])
    assert [(m.content, m.type, m.importance, m.subject) for m in res.memories] == [
        ("User's name is Sam", "personal", 9, "name"),
        ("User works at ByteDance", "personal", 8, ""),
        ("User uses React", "skill", 5, ""),  # missing importance: the middle of the scale
    ]
    assert all(m.source_turn_ids == ("t1", "t2") for m in res.memories)  # ids fall back
    assert res.usage == LLMUsage(900, 80, 1)
    (req,) = server.chats
    body = req.body
    assert body["model"] == MODEL and body["temperature"] == 0 and body["stream"] is False
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": COMPACT_EXTRACTION_SCHEMA, "strict": False},
    }
    roles = [m["role"] for m in body["messages"]]
    assert roles[0] == "system" and roles[-1] == "user" and roles.count("assistant") == 4
    examples = json.dumps(body["messages"][1:-1], ensure_ascii=False)
    assert "用户住在青岛" in examples and "User's name is Priya" in examples  # both languages
    assert "authorization" not in req.headers  # no key configured: none sent
    last = body["messages"][-1]["content"]
    assert "[t1] user (2026-03-04 09:30 UTC):" in last and "- User lives in Berlin" in last


def test_lm_studio_json_schema_only_and_a_server_without_json_mode(server: FakeOpenAI) -> None:
    with FakeOpenAI(json_modes={"json_schema"}) as lmstudio:
        lmstudio.enqueue(chat_json(ANSWER))
        assert len(llm(lmstudio).extract(TURNS).memories) == 3
        assert len(lmstudio.chats) == 1
    with FakeOpenAI(json_modes=set()) as plain:
        fenced = "Sure! Here is the JSON:\n```json\n" + json.dumps(ANSWER) + "\n```\nHope it helps."
        plain.enqueue(chat(fenced), chat(json.dumps(ANSWER) + "\n\nThat's all."))
        client = llm(plain)
        assert len(client.extract(TURNS).memories) == 3
        kinds = [r.body.get("response_format", {}).get("type") for r in plain.chats]
        assert kinds == ["json_schema", "json_object", None]
        # The mode that worked is kept: the next request goes straight to it.
        assert len(client.extract(TURNS).memories) == 3
        assert len(plain.chats) == 4 and "response_format" not in plain.chats[-1].body


def test_thinking_blocks_and_prose_around_the_object(server: FakeOpenAI) -> None:
    think = "<think>\nThe user said {their name}. Let me list facts.\n</think>\n"
    server.enqueue(chat(think + json.dumps(ANSWER) + "\nDone."))
    assert len(llm(server).extract(TURNS).memories) == 3


def test_a_malformed_answer_is_asked_again_once(server: FakeOpenAI) -> None:
    cut = chat('{"memories": [{"content": "User\'s name', finish_reason="length")
    server.enqueue(cut, chat("I don't know what JSON is."))
    with pytest.raises(LLMBadAnswer, match="asked twice") as info:
        llm(server).extract(TURNS)
    assert info.value.requests == 2 and info.value.input_tokens == 400
    assert "could not be read" in server.chats[1].body["messages"][-1]["content"]


def test_a_cut_answer_says_so_and_a_missing_answer_is_a_bad_answer(server: FakeOpenAI) -> None:
    cut = chat('{"memories": [', finish_reason="length")
    server.enqueue(cut, cut)
    with pytest.raises(LLMBadAnswer, match="cut off at 1500 tokens"):
        llm(server).extract(TURNS)
    server.enqueue(chat(None, prompt_tokens=None), chat_json(ANSWER, prompt_tokens=None))
    res = llm(server).extract(TURNS)
    assert len(res.memories) == 3 and res.usage == LLMUsage(0, 0, 2)  # no usage: calls count


@pytest.mark.parametrize("reply", [rate_limited(), error(500, "boom"), error(503, "loading")])
def test_rate_limits_and_server_errors_retry_later(server: FakeOpenAI, reply: object) -> None:
    server.enqueue(reply)  # type: ignore[arg-type]
    with pytest.raises(LLMRetryable, match=r"returned (429|500|503)") as info:
        llm(server).extract(TURNS)
    assert len(server.chats) == 1
    if "returned 429" in str(info.value):  # not "429" alone: the server's port may hold it
        assert "retry after 1 s" in str(info.value)


def test_a_slow_server_times_out_and_a_dead_one_is_retried_later(server: FakeOpenAI) -> None:
    server.enqueue(slow(5.0, chat_json(ANSWER)))
    started = time.monotonic()
    with pytest.raises(LLMRetryable, match="no answer within 0.5 s"):
        llm(server, timeout=0.5).extract(TURNS)
    assert time.monotonic() - started < 4.0
    with FakeOpenAI() as gone:
        url = gone.base_url
    with pytest.raises(LLMRetryable, match="cannot reach"):
        LLM(OpenAIBackend(url, MODEL, timeout=2.0)).extract(TURNS)


def test_a_wrong_key_and_an_unknown_model_are_configuration_errors() -> None:
    with FakeOpenAI(api_key="sk-local-right") as server:
        with pytest.raises(LLMConfigError, match="401") as info:
            LLM(OpenAIBackend(server.base_url, MODEL, api_key="sk-local-wrong")).extract(TURNS)
        assert "llm.api_key" in info.value.hint and "sk-local-wrong" not in str(info.value)
        server.enqueue(error(404, 'model "llama9" not found, try pulling it first'))
        with pytest.raises(LLMConfigError, match="404") as info:
            LLM(OpenAIBackend(server.base_url, "llama9", api_key="sk-local-right")).extract(TURNS)
        assert "llm.model" in info.value.hint
        server.enqueue(chat_json(ANSWER))
        LLM(OpenAIBackend(server.base_url, MODEL, api_key="sk-local-right")).extract(TURNS)
        assert server.chats[-1].headers["authorization"] == "Bearer sk-local-right"
    with pytest.raises(LLMConfigError, match="no model"):
        OpenAIBackend("http://127.0.0.1:11434/v1", "")


def test_an_unreadable_body_is_an_error(server: FakeOpenAI) -> None:
    from tests.fakes.anthropic_server import Reply

    server.enqueue(Reply(status=200, raw=b"<html>proxy</html>"))
    with pytest.raises(LLMError, match="unreadable response"):
        llm(server).extract(TURNS)


def test_summaries(server: FakeOpenAI) -> None:
    server.enqueue(chat_json({"title": "Meeting Sam", "summary": "Sam introduced himself."}))
    res = llm(server).summarize(TURNS)
    assert (res.title, res.summary) == ("Meeting Sam", "Sam introduced himself.")
    body = server.chats[0].body
    assert body["response_format"]["json_schema"]["schema"]["required"] == ["title", "summary"]
    assert [m["role"] for m in body["messages"]] == ["system", "user"]


def test_the_pacer_holds_requests_to_the_cap() -> None:
    now = [1000.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    pacer = Pacer(2, clock=lambda: now[0], sleep=sleep)
    assert pacer.wait() == 0 and pacer.wait() == 0
    now[0] += 10
    assert pacer.wait() == pytest.approx(50.0) and slept == [pytest.approx(50.0)]
    now[0] += 61
    assert pacer.wait() == 0


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://127.0.0.1:11434/v1", True),
        ("http://localhost:1234/v1", True),
        ("http://[::1]:8000/v1", True),
        ("http://192.168.1.20:8080/v1", True),
        ("http://gpu-box.local:8000/v1", True),
        ("https://openrouter.ai/api/v1", False),
        ("https://api.openai.com/v1", False),
        ("http://8.8.8.8/v1", False),
    ],
)
def test_which_servers_are_local(url: str, local: bool) -> None:
    assert is_local(url) is local
