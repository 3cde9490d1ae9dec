"""A hand-written memory file holding what must never leave the machine, and the check for it.

The file holds an Anthropic key, an AWS access key and a `password=` line in list items, and a
`<private>` block of two items plus an inline `<private>` span: what a person may well type
into their notes. Every path that takes Markdown out of memd (what the daemon serves, the LLM
prompts, the cloud, exports, the history) is checked with `leaked` against what it carried,
and with `carried` that it did carry the rest of the file (so a check cannot pass by sending
nothing).
"""

from __future__ import annotations

import random
import string

_rng = random.Random(20261207)


def _chars(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


# Assembled at run time from random characters: no real-looking key in the repository.
ANTHROPIC = "sk-" + "ant-" + "api03-" + _chars(93) + "AA"
AWS = "AK" + "IA" + _chars(16, string.ascii_uppercase + "234567")
PASSWORD = _chars(6) + "-" + _chars(8)
# Only the `<private>` markup hides these: they look like nothing a redaction rule knows.
THERAPIST = "Dr Zebulon Quarry"
SAFE_CODE = "vault combination 4471-" + _chars(4, string.digits)
INLINE = "ask Ottoline first"

REL = "topics/infra.md"
TEXT = f"""# Infra

## Deploy

- the deploy key is {ANTHROPIC}
- aws access key {AWS} for the staging bucket
- staging db password={PASSWORD}
- deploys go out blue-green every tuesday
<private>
- my therapist is {THERAPIST}
- the {SAFE_CODE}
</private>
- rollbacks are announced in the ops channel <private>{INLINE}</private>

## Later

- the canary runs in Frankfurt
"""
# Lines of TEXT that must still be there, wherever the file goes.
PUBLIC = ("blue-green every tuesday", "rollbacks are announced", "canary runs in Frankfurt")


def fragments() -> dict[str, str]:
    """What must never appear, by name."""
    return {"anthropic key": ANTHROPIC, "aws key": AWS, "password": PASSWORD,
            "private block": THERAPIST, "private block (2)": SAFE_CODE,
            "inline private span": INLINE}  # fmt: skip


def leaked(data: str | bytes) -> list[str]:
    """The names of the fragments found in `data` (names only: a failure shows no secret)."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    return [name for name, f in fragments().items() if f in text]


def carried(data: str | bytes) -> list[str]:
    """The public lines of the file found in `data`."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    return [p for p in PUBLIC if p in text]
