"""The pure three-way reverse of one file's change (`memd.history.merge`)."""

from __future__ import annotations

import pytest

from memd.core.redact import redact
from memd.history.merge import placeholder_map, revert_text

KEY = "sk-ant-api03-" + "m2N" * 31 + "AA"
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAx8k3c5mJr2S0V1Yh0Tq9M6pD2w9vL3kF8h1T0Zx7R0ABCDEF\n"
    "Q2w9vL3kF8h1T0Zx7R0ABCDEFMIIEowIBAAKCAQEAx8k3c5mJr2S0V1Yh0Tq9M6p\n"
    "-----END RSA PRIVATE KEY-----\n"
)


@pytest.mark.parametrize(
    ("before", "after", "current", "expected"),
    [
        # added line, nothing else changed
        ("a\nb\n", "a\nx\nb\n", "a\nx\nb\n", "a\nb\n"),
        # added line; later lines inserted right after it stay
        ("a\nb\n", "a\nx\nb\n", "a\nx\ny\nb\n", "a\ny\nb\n"),
        # removed line goes back between its unchanged neighbours
        ("a\nx\nb\n", "a\nb\n", "z\na\nb\nc\n", "z\na\nx\nb\nc\n"),
        # edited line
        ("a\nold\nb\n", "a\nnew\nb\n", "top\na\nnew\nb\n", "top\na\nold\nb\n"),
        # appended at the end, and something appended after it later
        ("a\n", "a\nx\n", "a\nx\n", "a\n"),
        ("a\n", "a\nx\n", "a\nx\ny\n", "a\ny\n"),
        # a file that had no final newline
        ("a\nb", "a\nb\nc", "a\nb\nc", "a\nb"),
    ],
)
def test_reverse_hunks_apply_to_the_current_text(
    before: str, after: str, current: str, expected: str
) -> None:
    r = revert_text(after, before, current)
    assert r.conflicts == ()
    assert r.text == expected


@pytest.mark.parametrize(
    ("before", "after", "current"),
    [
        ("a\nb\n", "a\nx\nb\n", "a\nx!\nb\n"),  # the added line was edited since
        ("a\nx\nb\n", "a\nb\n", "a\nnew\nb\n"),  # a line was put where the removed one was
        ("a\nx\n", "a\n", "a\ny\n"),  # something new where the removed last line was
        ("a\nb\n", "", "q\n"),  # emptied, then written again
    ],
)
def test_later_edits_of_the_same_lines_conflict(before: str, after: str, current: str) -> None:
    r = revert_text(after, before, current, label="notes.md")
    assert r.conflicts and all(c.startswith("notes.md: ") for c in r.conflicts)
    assert r.text == ""


def test_lines_holding_secrets_are_copied_real() -> None:
    current = f"key {KEY}\na\nx\n"
    after = redact(current)
    r = revert_text(after, redact(f"key {KEY}\na\n"), current)
    assert r.text == f"key {KEY}\na\n"


def test_a_multi_line_private_key_stays_whole() -> None:
    current = "top\n" + PEM + "a\nx\n"
    after = redact(current)
    assert after.count("\n") < current.count("\n")  # the block reads as one line once redacted
    r = revert_text(after, redact("top\n" + PEM + "a\n"), current)
    assert r.conflicts == ()
    assert r.text == "top\n" + PEM + "a\n"


def test_replacing_a_line_with_a_private_span_is_refused() -> None:
    current = "a <private>my secret plan</private> b\nc\n"
    after = redact(current)  # "a  b\nc\n"
    r = revert_text(after, "a b changed\nc\n", current)
    assert r.conflicts and "<private>" in r.conflicts[0]


def test_deleting_a_line_the_change_added_takes_its_secret_with_it() -> None:
    current = f"a\nnew key {KEY}\n"
    r = revert_text(redact(current), "a\n", current)
    assert r.text == "a\n"


def test_placeholder_map_matches_what_redact_writes() -> None:
    text = f"k {KEY} and password=swordfish99 at postgres://u:pw12345678@h/db"
    placeholders = placeholder_map(text)
    red = redact(text)
    for ph, secret in placeholders.items():
        assert ph in red and secret in text
    assert red.count("[REDACTED:") == len(placeholders)
