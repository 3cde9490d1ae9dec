"""The LLM interface over the Anthropic backend, with the real `anthropic` client and a local
fake Messages API.

Nothing here touches the internet: the fake server in `tests.fakes.anthropic_server`
answers on 127.0.0.1 with recorded-shape responses and injected faults.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memd.core.errors import LLMBadAnswer, LLMConfigError, LLMError, LLMRetryable
from memd.core.models import ExtractedMemory, Turn
from memd.llm.answers import EXTRACTION_SCHEMA, SUMMARY_SCHEMA, ExtractionResult, LLMUsage
from memd.llm.anthropic import AnthropicBackend
from memd.llm.client import LLM
from tests.fakes.anthropic_server import (
    FakeAnthropic,
    Reply,
    error,
    json_reply,
    overloaded,
    rate_limited,
    slow,
    text_reply,
    thinking_then_json,
)

# Assembled at run time: never a real-looking key in the repository.
API_KEY = "sk-ant-" + "api03-" + "test" * 24 + "AA"
SECRET_IN_TURN = "gh" + "p_" + "Z9" * 18
MODEL = "claude-test-model"
TS = datetime(2026, 3, 4, 9, 30, tzinfo=UTC).timestamp()

SEED_MESSAGE = (
    "Hi! My name is Sam, I'm 28 years old, working at ByteDance as a Senior Frontend "
    "Engineer. I mainly use React and TypeScript for development."
)


def _turn(turn_id: str, role: str, text: str) -> Turn:
    return Turn("ingest", "sess-1", turn_id, role, text, TS)


TURNS = [
    _turn("t1", "user", SEED_MESSAGE),
    _turn("t2", "assistant", "Nice to meet you, Sam!"),
    _turn("t3", "user", f"My GitHub token is {SECRET_IN_TURN}, please keep it."),
]

ANSWER = {
    "memories": [
        {
            "content": "User's name is Sam",
            "type": "personal",
            "importance": 9,
            "source_turn_ids": ["t1"],
            "subject": "name",
            "topic": "",
            "due": "",
        },
        {
            "content": "User mainly uses React and TypeScript",
            "type": "skill",
            "importance": 7,
            "source_turn_ids": ["t1"],
            "subject": "",
            "topic": "",
            "due": "",
        },
    ]
}


@pytest.fixture
def server() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as fake:
        yield fake


def _extractor(server: FakeAnthropic, **kwargs: float) -> LLM:
    options: dict[str, float] = {"timeout": 5.0, **kwargs}
    backend = AnthropicBackend(
        API_KEY,
        MODEL,
        base_url=server.base_url,
        timeout=options["timeout"],
        max_retries=int(options.get("max_retries", 0)),
    )
    return LLM(backend, max_tokens=int(options.get("max_tokens", 1500)))


def test_extract_parses_memories_and_usage(server: FakeAnthropic) -> None:
    server.enqueue(json_reply(ANSWER, input_tokens=321, output_tokens=54))
    result = _extractor(server).extract(TURNS)
    assert isinstance(result, ExtractionResult)
    assert result.usage == LLMUsage(321, 54)
    assert result.memories == [
        ExtractedMemory("User's name is Sam", "personal", 9, ("t1",), subject="name"),
        ExtractedMemory("User mainly uses React and TypeScript", "skill", 7, ("t1",)),
    ]


def test_request_shape_thinking_disabled_schema_no_temperature(server: FakeAnthropic) -> None:
    server.enqueue(json_reply(ANSWER))
    _extractor(server, max_tokens=777).extract(TURNS, known=["User lives in Berlin"])
    assert len(server.requests) == 1
    request = server.requests[0]
    assert request.path == "/v1/messages"
    # SDK 2.12 sends the key as a bearer token; older versions used x-api-key.
    sent_key = request.headers.get("x-api-key") or request.headers.get("authorization", "")
    assert sent_key.removeprefix("Bearer ") == API_KEY
    body = request.body
    assert body["model"] == MODEL
    assert body["max_tokens"] == 777
    assert body["thinking"] == {"type": "disabled"}
    assert "temperature" not in body and "top_p" not in body and "top_k" not in body
    assert body["output_config"] == {"format": {"type": "json_schema", "schema": EXTRACTION_SCHEMA}}
    assert isinstance(body["system"], str) and "standalone" in body["system"]
    for type_name in (
        "personal",
        "skill",
        "project",
        "preference",
        "task",
        "decision",
        "knowledge",
    ):
        assert type_name in body["system"]
    assert "Skip greetings" in body["system"]
    assert "Only explicit facts" in body["system"]
    assert body["messages"][0]["role"] == "user"
    prompt = body["messages"][0]["content"]
    assert "[t1] user (2026-03-04 09:30 UTC):" in prompt
    assert "[t2] assistant" in prompt and "[t3] user" in prompt
    assert "My name is Sam" in prompt
    assert "- User lives in Berlin" in prompt and "do not repeat them" in prompt


def test_schema_is_strict_for_structured_outputs() -> None:
    item = EXTRACTION_SCHEMA["properties"]["memories"]["items"]
    assert EXTRACTION_SCHEMA["additionalProperties"] is False
    assert item["additionalProperties"] is False
    assert set(item["required"]) == set(item["properties"])
    assert item["properties"]["type"]["enum"] == [
        "personal",
        "preference",
        "skill",
        "project",
        "task",
        "decision",
        "knowledge",
    ]
    assert "minimum" not in json.dumps(EXTRACTION_SCHEMA)  # rejected by structured outputs
    assert set(SUMMARY_SCHEMA["required"]) == {"title", "summary"}


def test_secrets_in_turns_are_redacted_before_sending(server: FakeAnthropic) -> None:
    server.enqueue(json_reply({"memories": []}))
    _extractor(server).extract(
        [
            *TURNS,
            _turn(
                "t4",
                "user",
                "db is postgres://app:s3cretpw@db.internal/x <private>my diary</private>",
            ),
        ]
    )
    raw = server.requests[0].raw.decode()
    assert SECRET_IN_TURN not in raw
    assert "[REDACTED:github-token:" in raw
    assert "s3cretpw" not in raw and "postgres://app:[REDACTED:url-password:" in raw
    assert "my diary" not in raw


def test_thinking_block_before_text_is_skipped(server: FakeAnthropic) -> None:
    server.enqueue(thinking_then_json(ANSWER))
    result = _extractor(server).extract(TURNS)
    assert [m.content for m in result.memories] == [
        "User's name is Sam",
        "User mainly uses React and TypeScript",
    ]


def test_fenced_json_is_accepted(server: FakeAnthropic) -> None:
    server.enqueue(text_reply("```json\n" + json.dumps(ANSWER) + "\n```"))
    assert len(_extractor(server).extract(TURNS).memories) == 2


def test_malformed_json_is_asked_again_once_then_a_bad_answer(server: FakeAnthropic) -> None:
    bad = text_reply('{"memories": [{"content": "User', input_tokens=100, output_tokens=10)
    server.enqueue(bad, bad)
    with pytest.raises(LLMBadAnswer, match="malformed JSON from model.*asked twice") as info:
        _extractor(server).extract(TURNS)
    assert not isinstance(info.value, (LLMRetryable, LLMConfigError))
    assert (info.value.requests, info.value.input_tokens, info.value.output_tokens) == (2, 200, 20)
    # The second request says why it is asked again.
    again = server.requests[1].body["messages"][-1]["content"]
    assert "could not be read as the JSON object" in again
    assert "could not be read" not in server.requests[0].body["messages"][-1]["content"]


def test_a_good_second_answer_is_used_and_both_are_billed(server: FakeAnthropic) -> None:
    server.enqueue(text_reply("I cannot", input_tokens=50, output_tokens=5), json_reply(ANSWER))
    result = _extractor(server).extract(TURNS)
    assert len(result.memories) == 2 and result.usage == LLMUsage(170, 45, 2)


def test_output_cut_at_max_tokens_says_so(server: FakeAnthropic) -> None:
    cut = text_reply('{"memories": [{"content": "Us', stop_reason="max_tokens")
    server.enqueue(cut, cut)
    with pytest.raises(LLMError, match="cut off at 1500 tokens"):
        _extractor(server).extract(TURNS)


def test_items_are_validated(server: FakeAnthropic) -> None:
    def item(**fields: object) -> dict[str, object]:
        base: dict[str, object] = {
            "content": "x",
            "type": "preference",
            "importance": 5,
            "source_turn_ids": ["t1"],
            "subject": "",
            "topic": "",
            "due": "",
        }
        return {**base, **fields}

    server.enqueue(
        json_reply(
            {
                "memories": [
                    item(content="Unknown type", type="gossip"),
                    item(content="   "),
                    "not an object",
                    item(content="Too important", importance=42),
                    item(content="Not important", importance=0),
                    item(content="Importance as text", importance="7"),
                    item(content="Bad ids", source_turn_ids=["nope", 3]),
                    item(content="Some ids good", source_turn_ids=["t3", "zzz", "t3"]),
                    item(content="Has task", type="task", due="2026-03-06"),
                    item(content="Bad due", type="task", due="Friday"),
                    item(content="User lives in Berlin"),
                    item(content="Too important"),
                    item(content="Key in answer " + SECRET_IN_TURN, subject="Editor"),
                ]
            }
        )
    )
    memories = _extractor(server).extract(TURNS, known=["user lives in berlin"]).memories
    by_content = {m.content: m for m in memories}
    assert "Unknown type" not in by_content
    assert "User lives in Berlin" not in by_content  # already known
    assert len([m for m in memories if m.content == "Too important"]) == 1
    assert by_content["Too important"].importance == 10
    assert by_content["Not important"].importance == 1
    assert by_content["Importance as text"].importance == 7
    assert by_content["Bad ids"].source_turn_ids == ("t1", "t2", "t3")
    assert by_content["Some ids good"].source_turn_ids == ("t3",)
    assert by_content["Has task"].due == "2026-03-06"
    assert by_content["Bad due"].due == ""
    leaked = [m for m in memories if m.content.startswith("Key in answer")]
    assert leaked and SECRET_IN_TURN not in leaked[0].content
    assert leaked[0].subject == "editor"


def test_missing_memories_list_is_malformed(server: FakeAnthropic) -> None:
    server.enqueue(json_reply({"facts": []}), json_reply({"memories": "none"}))
    with pytest.raises(LLMError, match="malformed JSON"):
        _extractor(server).extract(TURNS)


def test_rate_limit_without_sdk_retries_is_retryable(server: FakeAnthropic) -> None:
    server.enqueue(rate_limited())
    with pytest.raises(LLMRetryable, match="429"):
        _extractor(server).extract(TURNS)
    assert len(server.requests) == 1


def test_rate_limit_then_success_with_one_sdk_retry(server: FakeAnthropic) -> None:
    server.enqueue(rate_limited(), json_reply(ANSWER))
    result = _extractor(server, max_retries=1).extract(TURNS)
    assert len(result.memories) == 2
    assert len(server.requests) == 2
    assert server.pending == 0


def test_overloaded_529_is_retryable(server: FakeAnthropic) -> None:
    server.enqueue(overloaded())
    with pytest.raises(LLMRetryable, match="529"):
        _extractor(server).extract(TURNS)


@pytest.mark.parametrize("status", [500, 502, 503])
def test_server_errors_are_retryable(server: FakeAnthropic, status: int) -> None:
    server.enqueue(error(status, "api_error", "Internal server error"))
    with pytest.raises(LLMRetryable, match=str(status)):
        _extractor(server).extract(TURNS)


def test_unauthorized_is_config_error_with_key_hint_and_no_key(server: FakeAnthropic) -> None:
    server.enqueue(error(401, "authentication_error", "invalid x-api-key"))
    with pytest.raises(LLMConfigError, match="401") as info:
        _extractor(server).extract(TURNS)
    assert "ANTHROPIC_API_KEY" in info.value.hint and "llm.api_key" in info.value.hint
    assert API_KEY not in str(info.value) and API_KEY not in info.value.hint
    assert API_KEY not in repr(_extractor(server))


@pytest.mark.parametrize(
    ("status", "error_type", "hint_part"),
    [
        (403, "permission_error", "ANTHROPIC_API_KEY"),
        (404, "not_found_error", "llm.model"),
        (400, "invalid_request_error", "llm.model"),
    ],
)
def test_client_errors_are_config_errors(
    server: FakeAnthropic, status: int, error_type: str, hint_part: str
) -> None:
    server.enqueue(error(status, error_type, "nope"))
    with pytest.raises(LLMConfigError, match=str(status)) as info:
        _extractor(server).extract(TURNS)
    assert hint_part in info.value.hint


def test_other_client_error_is_plain_llm_error(server: FakeAnthropic) -> None:
    server.enqueue(error(413, "request_too_large", "Request exceeds the maximum size"))
    with pytest.raises(LLMError, match="413") as info:
        _extractor(server).extract(TURNS)
    assert not isinstance(info.value, (LLMRetryable, LLMConfigError))


def test_timeout_is_retryable_and_fast(server: FakeAnthropic) -> None:
    server.enqueue(slow(5.0))
    started = time.monotonic()
    with pytest.raises(LLMRetryable, match="timed out"):
        _extractor(server, timeout=0.5).extract(TURNS)
    assert time.monotonic() - started < 3.0


def test_connection_refused_is_retryable() -> None:
    with FakeAnthropic() as fake:
        base_url = fake.base_url
    extractor = LLM(AnthropicBackend(API_KEY, MODEL, base_url=base_url, timeout=2.0))
    with pytest.raises(LLMRetryable, match="cannot reach"):
        extractor.extract(TURNS)


def test_empty_input_makes_no_request(server: FakeAnthropic) -> None:
    extractor = _extractor(server)
    assert extractor.extract([]).memories == []
    assert extractor.summarize([]).title == ""
    assert server.requests == []


def test_summarize(server: FakeAnthropic) -> None:
    server.enqueue(
        json_reply(
            {"title": "Meeting Sam, a frontend engineer", "summary": "Sam introduced himself."},
            input_tokens=200,
            output_tokens=20,
        )
    )
    result = _extractor(server).summarize(TURNS)
    assert result.title == "Meeting Sam, a frontend engineer"
    assert result.summary == "Sam introduced himself."
    assert result.usage == LLMUsage(200, 20)
    body = server.requests[0].body
    assert body["output_config"] == {"format": {"type": "json_schema", "schema": SUMMARY_SCHEMA}}
    assert body["thinking"] == {"type": "disabled"}
    assert SECRET_IN_TURN not in server.requests[0].raw.decode()


def test_summarize_malformed(server: FakeAnthropic) -> None:
    server.enqueue(json_reply({"title": 3, "summary": None}), json_reply({"title": "x"}))
    with pytest.raises(LLMError, match="malformed JSON"):
        _extractor(server).summarize(TURNS)


def test_missing_key_or_model_is_config_error() -> None:
    with pytest.raises(LLMConfigError) as info:
        AnthropicBackend("", MODEL)
    assert "ANTHROPIC_API_KEY" in info.value.hint
    with pytest.raises(LLMConfigError, match="model"):
        AnthropicBackend(API_KEY, "")


def test_fake_server_answers_loudly_when_script_is_empty(server: FakeAnthropic) -> None:
    with pytest.raises(LLMRetryable, match="no scripted reply"):
        _extractor(server).extract(TURNS)


def test_malformed_http_body_is_an_error(server: FakeAnthropic) -> None:
    server.enqueue(Reply(status=200, raw=b"<html>gateway</html>"))
    with pytest.raises(LLMError):
        _extractor(server).extract(TURNS)


def test_adapters_do_not_import_the_sdk_at_import_time() -> None:
    root = Path(__file__).resolve().parents[2]
    code = (
        "import sys\n"
        "import memd.llm.anthropic, memd.extraction.rules, memd.core.redact\n"
        "assert 'anthropic' not in sys.modules, 'anthropic imported eagerly'\n"
        "memd.llm.anthropic.AnthropicBackend('k', 'm')\n"
        "assert 'anthropic' not in sys.modules, 'anthropic imported by the constructor'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root)
