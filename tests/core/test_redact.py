"""Secret redaction: every rule of the set, prose that must survive, `<private>` spans.

Fake keys are assembled from fragments at run time so no real-looking credential is
ever committed (push protection would block it, and scanners would flag the repo).
"""

from __future__ import annotations

import hashlib
import random
import string

import pytest

from memd.core.redact import find_secrets, redact

_RNG = random.Random(4)
_ALNUM = string.ascii_letters + string.digits


def _chars(n: int, alphabet: str = _ALNUM) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


def _tag(kind: str, secret: str) -> str:
    return f"[REDACTED:{kind}:{hashlib.sha256(secret.encode()).hexdigest()[:8]}]"


SK = "s" + "k"
ANTHROPIC = f"{SK}-ant-api03-{_chars(93, _ALNUM + '_-')}AA"
ANTHROPIC_ADMIN = f"{SK}-ant-admin01-{_chars(93, _ALNUM + '_-')}AA"
ANTHROPIC_OTHER = f"{SK}-ant-oat01-{_chars(40)}"
OPENAI_PROJ = f"{SK}-proj-{_chars(58)}T3Blbk" + f"FJ{_chars(58)}"
OPENAI_LEGACY = f"{SK}-{_chars(20)}T3Blbk" + f"FJ{_chars(20)}"
AWS = "AK" + "IA" + _chars(16, string.ascii_uppercase + "234567")
GITHUB = "gh" + "p_" + _chars(36)
GITHUB_OAUTH = "gh" + "o_" + _chars(36)
GITHUB_PAT = "github" + "_pat_" + _chars(82, _ALNUM + "_")
GITLAB = "gl" + "pat-" + _chars(20)
SLACK = "xo" + "xb-" + _chars(12, string.digits) + "-" + _chars(24)
STRIPE = SK + "_li" + "ve_" + _chars(24)
GOOGLE = "AI" + "za" + _chars(35)
JWT = "ey" + "J" + _chars(20) + ".ey" + "J" + _chars(30) + "." + _chars(43, _ALNUM + "_-")
SUPABASE = "sb_" + "secret_" + _chars(32)
PEM = (
    "-----BEGIN RSA PRIVATE"
    + " KEY-----\n"
    + "\n".join(_chars(64, _ALNUM + "+/") for _ in range(4))
    + "\n-----END RSA PRIVATE"
    + " KEY-----"
)


@pytest.mark.parametrize(
    ("kind", "secret"),
    [
        ("anthropic-key", ANTHROPIC),
        ("anthropic-admin-key", ANTHROPIC_ADMIN),
        ("anthropic-key", ANTHROPIC_OTHER),
        ("openai-key", OPENAI_PROJ),
        ("openai-key", OPENAI_LEGACY),
        ("aws-access-key", AWS),
        ("github-token", GITHUB),
        ("github-token", GITHUB_OAUTH),
        ("github-token", GITHUB_PAT),
        ("gitlab-token", GITLAB),
        ("slack-token", SLACK),
        ("stripe-key", STRIPE),
        ("google-api-key", GOOGLE),
        ("jwt", JWT),
        ("supabase-key", SUPABASE),
        ("private-key", PEM),
    ],
)
def test_provider_secret_is_replaced_by_stable_placeholder(kind: str, secret: str) -> None:
    text = f"here it is: {secret} -- keep it safe"
    out = redact(text)
    assert secret not in out
    assert out == f"here it is: {_tag(kind, secret)} -- keep it safe"
    assert find_secrets(text) == [(kind, 12, 12 + len(secret))]


def test_same_secret_gets_same_placeholder_and_different_secrets_differ() -> None:
    other = f"{SK}-ant-api03-{_chars(93)}AA"
    out = redact(f"{ANTHROPIC} {ANTHROPIC} {other}")
    first, second, third = out.split()
    assert first == second != third


def test_redaction_is_idempotent() -> None:
    text = f"url postgres://app:{_chars(12)}@db:5432/x key {ANTHROPIC} password={_chars(10)}"
    once = redact(text)
    assert redact(once) == once


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("postgres://app:hunter2@db.local:5432/main", "postgres://app:{}@db.local:5432/main"),
        ("https://bob:p%40ss@example.com/x", "https://bob:{}@example.com/x"),
        ("redis://default:abc@127.0.0.1", "redis://default:{}@127.0.0.1"),
    ],
)
def test_url_password_keeps_scheme_user_and_host(text: str, expected: str) -> None:
    password = text.split("://", 1)[1].split("@", 1)[0].split(":", 1)[1]
    assert redact(text) == expected.format(_tag("url-password", password))


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("password=hunter22", "password", "hunter22"),
        ("export DB_PASSWORD=S3cure-Pass", "password", "S3cure-Pass"),
        ('{"api_key": "abcd1234efgh"}', "api-key", "abcd1234efgh"),
        ("api-key: Zx81!klmQ", "api-key", "Zx81!klmQ"),
        ("token = 9f8e7d6c5b4a", "token", "9f8e7d6c5b4a"),
        ("secret: 'correct-horse'", "secret", "correct-horse"),
        ("GITHUB_TOKEN=abcdef0123456789", "token", "abcdef0123456789"),
        ("csrf_token=ab12cd34ef56", "token", "ab12cd34ef56"),
        ("Authorization: Bearer abcdefghijklmnop0123", "bearer-token", "abcdefghijklmnop0123"),
    ],
)
def test_keyword_assignment_value_is_redacted(text: str, kind: str, value: str) -> None:
    out = redact(text)
    assert value not in out
    assert _tag(kind, value) in out


def test_keyword_holding_a_provider_key_gets_the_provider_kind() -> None:
    assert redact(f"ANTHROPIC_API_KEY={ANTHROPIC}") == "ANTHROPIC_API_KEY=" + _tag(
        "anthropic-key", ANTHROPIC
    )


@pytest.mark.parametrize(
    "text",
    [
        "The token you sent expired, so I asked for a password reset.",
        "Password: forgotten. Secret: nothing much. Token: whatever",
        "token = short",
        "password=${DB_PASSWORD} api_key=<your-key-here> secret: ********",
        "request id 123e4567-e89b-12d3-a456-426614174000 failed",
        "fixed in commit 3f2a9c1d4e5b6a7f8091a2b3c4d5e6f708192a3b, see also 9fceb02",
        "The task-antelope module and the disk-anthology repo are fine.",
        "ASIA is a continent; AKIAK is a town; AIzawa is a name.",
        "See https://example.com:8443/path and ssh://git@github.com/org/repo.git",
        "Meeting at 10:30, ratio 16:9, key=value pairs, x = y + 1",
        "eyJ alone is not a JWT, nor is ghp_short or xoxb-1.",
        "Use bearer tokens for auth; the Bearer scheme is documented.",
        "我的密码忘了，需要重置 token",
    ],
)
def test_prose_is_left_alone(text: str) -> None:
    assert redact(text) == text
    assert find_secrets(text) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a <private>my home address</private> b", "a  b"),
        ("x <PRIVATE>\nline one\nline two\n</Private> y", "x  y"),
        ("one <private>two</private> three <private>four</private> five", "one  three  five"),
        ("keep this <private>and drop\neverything after", "keep this "),
        ("no tags here", "no tags here"),
    ],
)
def test_private_spans_are_dropped(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_secret_inside_private_span_is_dropped_not_tagged() -> None:
    assert redact(f"k <private>{ANTHROPIC}</private>") == "k "


def test_unclosed_pem_block_drops_its_body_but_not_following_prose() -> None:
    body = "\n".join(_chars(64, _ALNUM + "+/") for _ in range(3))
    text = "-----BEGIN OPENSSH PRIVATE" + f" KEY-----\n{body}\n\nThanks for the help"
    out = redact(text)
    assert body.splitlines()[1] not in out
    assert out.startswith("[REDACTED:private-key:")
    assert out.endswith("\n\nThanks for the help")


def test_many_secrets_in_one_text_keep_surrounding_text() -> None:
    text = f"A {AWS} B {GITHUB} C {JWT} D postgres://u:pw12345@h E"
    out = redact(text)
    assert [kind for kind, _, _ in find_secrets(text)] == [
        "aws-access-key",
        "github-token",
        "jwt",
        "url-password",
    ]
    for secret in (AWS, GITHUB, JWT, "pw12345"):
        assert secret not in out
    assert out.startswith("A [REDACTED:aws-access-key:")
    assert " B [REDACTED:github-token:" in out
    assert out.endswith("@h E")
