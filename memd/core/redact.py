"""Secret redaction applied to every turn before it is stored, synced or sent to an LLM.

`redact(text)` drops `<private>…</private>` spans, then replaces each secret with
`[REDACTED:<kind>:<sha256-8>]`. The hash is the first 8 hex digits of the SHA-256 of
the secret itself, so the same key redacts to the same placeholder everywhere
(duplicates stay linkable) while the secret is never stored.

The rule set follows gitleaks' provider rules (Anthropic, OpenAI, AWS, GitHub,
GitLab, Slack, Stripe, Google, Supabase, JWTs, PEM private keys), plus passwords in
URLs, `Bearer` tokens and keyword assignments (`password=…`, `api_key: …`).
Redaction is idempotent: placeholders are never redacted again.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

__all__ = ["find_secrets", "join_redacted", "redact"]

_PLACEHOLDER_PREFIX = "[REDACTED:"

_PRIVATE_RE = re.compile(r"<private\b[^>]*>.*?(?:</private\s*>|\Z)", re.IGNORECASE | re.DOTALL)

# Every rule starts with a literal or a small character set and carries no leading
# lookbehind: that lets `re` skip ahead with its prefix scan instead of trying each
# position, which is the difference between ~13 µs and ~500 µs per KB of prose. The
# left-boundary check ("task-ant-…" is not "sk-ant-…") is done in Python instead.
_END = r"(?![A-Za-z0-9_\-])"
_PROVIDER_RES: tuple[re.Pattern[str], ...] = (
    re.compile(
        # An unclosed block still drops its base64 body.
        r"(?P<private_key>-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[\s\S]*?-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"
        r"|(?:\s*(?:Proc-Type|DEK-Info):[^\n]*|\s*[A-Za-z0-9+/]{16,}={0,2}|\s*[A-Za-z0-9+/]{1,15}={1,2})*))"
    ),
    re.compile(
        r"sk-(?:(?P<anthropic_admin_key>ant-admin01-[A-Za-z0-9_\-]{93}AA" + _END + ")"
        r"|(?P<anthropic_key>ant-(?:api03-[A-Za-z0-9_\-]{93}AA" + _END + r"|[A-Za-z0-9_\-]{20,}))"
        r"|(?P<openai_key>(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}"
        r"|[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}" + _END + "))"
    ),
    re.compile(
        r"A(?:(?P<aws_access_key>(?:KIA|SIA|BIA|CCA)[A-Z2-7]{16}(?![A-Za-z0-9]))"
        r"|(?P<google_api_key>Iza[A-Za-z0-9_\-]{35}" + _END + "))"
    ),
    re.compile(
        r"g(?P<github_token>h[pousr]_[A-Za-z0-9]{36,255}" + _END + "|ithub_pat_[A-Za-z0-9_]{22,})"
        r"|g(?P<gitlab_token>lpat-[A-Za-z0-9_\-.]{20,})"
    ),
    re.compile(r"x(?P<slack_token>ox[baprs]-[A-Za-z0-9\-]{10,})"),
    re.compile(r"(?P<stripe_key>sk_(?:live|test|prod)_[A-Za-z0-9]{16,})"),
    re.compile(r"(?P<stripe_key>rk_(?:live|test|prod)_[A-Za-z0-9]{16,})"),
    re.compile(r"s(?P<supabase_key>b_secret_[A-Za-z0-9_\-]{20,})"),
    re.compile(r"e(?P<jwt>yJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{10,})"),
)
# Literals at least one of which every match of the rule above at the same position contains:
# `in` finds them at C speed, so a text with none of them skips that rule's regex (most prose
# has none, and setting up a dozen scans was most of the cost of redacting a short turn).
_PROVIDER_TRIGGERS: tuple[tuple[str, ...], ...] = (
    ("-----BEGIN",),
    ("sk-",),
    ("AKIA", "ASIA", "ABIA", "ACCA", "AIza"),
    ("gh", "github_pat_", "glpat-"),
    ("xox",),
    ("sk_",),
    ("rk_",),
    ("sb_secret_",),
    ("eyJ",),
)
# scheme://user:password@host: the password only; scheme, user and host stay.
_URL_RE = re.compile(r"://[^\s:/@'\"<>]{1,128}:(?P<url_password>[^\s@/'\"<>]{1,256})@")
# Matched from "earer" so the scan has a literal to skip to; the "B"/"b" is checked after.
_BEARER_RES = tuple(
    re.compile(tail + r"[ \t]+(?P<bearer_token>[A-Za-z0-9_\-.~+/]{16,}=*)")
    for tail in ("earer", "EARER")
)
# Keyword assignments are found from the operator backwards: `:` and `=` are rare in
# prose, the keywords are not.
_OP_RES = tuple(
    re.compile(op + r"[ \t]*(?P<quote>[\"']?)(?P<value>[^\s\"'`,;]{8,})") for op in (":", "=")
)
_KEYWORD_RE = re.compile(
    r"(?P<name>pass(?:word|wd|phrase)?|pwd|secret(?:[_\-]?key)?|client[_\-]?secret"
    r"|(?:access|auth|refresh|api|bearer|session)?[_\-]?token"
    r"|api[_\-]?key|access[_\-]?key(?:[_\-]?id)?|secret[_\-]?access[_\-]?key|private[_\-]?key)"
    r"[\"']?[ \t]*\Z",
    re.IGNORECASE,
)
_KEYWORD_WINDOW = 40
_KEYWORD_STEMS = ("pass", "pwd", "secret", "token", "key")

_PLACEHOLDER_VALUES = frozenset(
    {"required", "optional", "undefined", "none", "null", "changeme", "password", "redacted"}
)
_WORDLIKE_RE = re.compile(r"[A-Za-z][a-z]*[.!?]?")
_SAME_CHAR_RE = re.compile(r"(.)\1*")
_IDENT_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def _kind(group: str) -> str:
    return group.replace("_", "-")


def _keyword_kind(name: str) -> str:
    low = name.lower()
    if low.startswith("pass") or low == "pwd":
        return "password"
    if "token" in low:
        return "token"
    if "key" in low:
        return "api-key"
    return "secret"


def _keyword_value_is_secret(value: str, quoted: bool, op: str) -> bool:
    """Tell a credential from prose such as `Password: forgotten` or `token: ${TOKEN}`."""
    if value.startswith(_PLACEHOLDER_PREFIX) or value[0] in "$<{%[(*":
        return False
    if value.lower() in _PLACEHOLDER_VALUES or _SAME_CHAR_RE.fullmatch(value):
        return False
    # `key: word` is how prose reads; `key=word` and `key: "word"` are assignments.
    return not (op == ":" and not quoted and _WORDLIKE_RE.fullmatch(value))


def _scan(text: str) -> list[tuple[int, int, str]]:
    """All candidate secrets as (start, end, kind), overlaps resolved, in order."""
    # (start, priority, -end, kind): provider rules win over context rules on a tie.
    hits: list[tuple[int, int, int, str]] = []
    for rx, triggers in zip(_PROVIDER_RES, _PROVIDER_TRIGGERS, strict=True):
        for t in triggers:  # a plain loop: any() with a generator costs more than the scans
            if t in text:
                break
        else:
            continue
        for m in rx.finditer(text):
            start = m.start()
            if start and text[start - 1] in _IDENT_CHARS and text[start] != "-":
                continue
            hits.append((start, 0, -m.end(), _kind(m.lastgroup or "")))
    if "://" in text:
        for m in _URL_RE.finditer(text):
            if not m.group("url_password").startswith(_PLACEHOLDER_PREFIX):
                hits.append((m.start(1), 1, -m.end(1), "url-password"))
    for bearer_re, word in zip(_BEARER_RES, ("earer", "EARER"), strict=True):
        if word not in text:
            continue
        for m in bearer_re.finditer(text):
            b_at = m.start() - 1
            if b_at >= 0 and text[b_at] in "Bb" and (b_at == 0 or not text[b_at - 1].isalnum()):
                hits.append((m.start(1), 1, -m.end(1), "bearer-token"))
    for op_re, op in zip(_OP_RES, (":", "="), strict=True):
        if op not in text:
            continue
        for m in op_re.finditer(text):
            op_at = m.start()
            lo = max(0, op_at - _KEYWORD_WINDOW)
            # Code is full of `=`: a substring test skips the regex for almost all of them.
            window = text[lo:op_at].lower()
            if not any(stem in window for stem in _KEYWORD_STEMS):
                continue
            kw = _KEYWORD_RE.search(text, lo, op_at)
            # "csrf_token=" counts ("_token" ends a name), "mytoken=" does not.
            if kw is None or (
                kw.start() and text[kw.start() - 1].isalnum() and text[kw.start()] not in "_-"
            ):
                continue
            if _keyword_value_is_secret(m.group("value"), bool(m.group("quote")), text[op_at]):
                kind = _keyword_kind(kw.group("name"))
                hits.append((m.start("value"), 2, -m.end("value"), kind))
    hits.sort()
    kept: list[tuple[int, int, str]] = []
    last_end = -1
    for start, _, neg_end, kind in hits:
        if start >= last_end:
            kept.append((start, -neg_end, kind))
            last_end = -neg_end
    return kept


def _placeholder(kind: str, secret: str) -> str:
    digest = hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{_PLACEHOLDER_PREFIX}{kind}:{digest}]"


def find_secrets(text: str) -> list[tuple[str, int, int]]:
    """Return `(kind, start, end)` for every secret in `text`, in order of position.

    Offsets index `text` as given (`<private>` spans are not treated specially here).
    For passwords in URLs, `Bearer` headers and keyword assignments the span covers
    the value only.
    """
    return [(kind, start, end) for start, end, kind in _scan(text)]


def redact(text: str, *, keep_lines: bool = False) -> str:
    """Drop `<private>` spans and replace secrets with `[REDACTED:<kind>:<sha256-8>]`.

    An unclosed `<private>` drops everything after it. Applying it twice changes nothing.
    With `keep_lines`, every line break of what is dropped or replaced stays (after the
    placeholder), so each remaining line keeps its line number: what the index holds of a
    Markdown file still points at the right lines of the file on disk.
    """
    if "<" in text:
        text = _PRIVATE_RE.sub(_line_breaks if keep_lines else "", text)
    hits = _scan(text)
    if not hits:
        return text
    out: list[str] = []
    pos = 0
    for start, end, kind in hits:
        out.append(text[pos:start])
        out.append(_placeholder(kind, text[start:end]))
        if keep_lines:
            out.append("\n" * text.count("\n", start, end))
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _line_breaks(m: re.Match[str]) -> str:
    return "\n" * m.group().count("\n")


def join_redacted(pieces: Sequence[str], sep: str) -> str:
    """`sep.join(pieces)` with the secrets of the pieces read as one text replaced.

    Content arrays and streamed messages can split a token between two pieces: redacting the
    joined text would see two halves, neither of them a secret. Here the pieces are scanned as
    they were written, back to back, and each secret found is replaced in the first piece that
    holds part of it (its rest is dropped from the others). `redact` still runs on the result.
    """
    if len(pieces) < 2:
        return sep.join(pieces)
    whole = "".join(pieces)
    hits = _scan(whole)
    if not hits:
        return sep.join(pieces)
    out: list[str] = []
    start = 0
    for piece in pieces:
        end = start + len(piece)
        kept: list[str] = []
        pos = start
        for s, e, kind in hits:
            if e <= start or s >= end:
                continue
            kept.append(whole[pos : max(s, pos)])
            if s >= start:
                kept.append(_placeholder(kind, whole[s:e]))
            pos = min(e, end)
        kept.append(whole[pos:end])
        out.append("".join(kept))
        start = end
    return sep.join(out)
