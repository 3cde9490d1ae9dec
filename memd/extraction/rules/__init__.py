"""The offline extractor: English and Chinese patterns for the facts people state about themselves.

Used when no LLM is configured. It reads only user turns and proposes the same
`ExtractedMemory` values the LLM extractor does: standalone statements ("User's name
is Sam", "用户喜欢简洁的代码") with a type, an importance on the seed-004 scale
(identity 8–10, skills 6–8, preferences 4–6, transient 1–3), the turn they came from,
and a `subject` key for single-valued facts (`name`, `employer`, `city`,
`tool:testing`, `style:length`, `date:<event>` …) so a later "I switched to vitest"
supersedes "I use jest".

It is deliberately conservative: a question, a hypothetical, a quoted passage, a text given to
be translated or corrected, or an object that is a pronoun yields nothing. Missing a fact is
cheaper than storing a wrong one.

The API (pure functions over `memd.core.models.Turn`; only user turns are read):

- `extract_rules(turns, *, tz=None) -> list[ExtractedMemory]`: every memory the turns state,
  in order; relative dates resolved against each turn's `ts` in `tz`.
- `memory_points(turns, *, tz=None) -> list[ExtractedMemory]`: the subset that says how the
  assistant should work with the user ("keep your answers short from now on" →
  "User asks to keep the assistant's answers short from now on", subject `style:length`;
  "别用表情" → `style:emoji`; "I often work late at night" → `schedule`).
  `is_memory_point(memory)` tells one memory apart, so a caller can send these to an agent's
  relationship file and the rest to the user's files.
- `session_signals(turns) -> list[SessionSignals]`: per session (with its `agent_id`), the
  interaction signals of its user turns: `Signal(kind, turn_id, strength, evidence)` with
  `kind` a `SignalKind` (thanks, praise, frustration, correction, revert) and `strength` in
  (0, 1]; `turn_signals(turn)` does one turn. Quoted text and mentions ("how do I say thanks in
  Japanese?", "how do I revert a commit?") are not signals.

Modules: `extract` (the driver), `message` (the user's own words), `common` (sentences,
questions, pronouns, importances, `Ctx`), `units` (a sentence that states and asks, cut into what
it states and what it asks, each read alone: "I'm allergic to peanuts, can you suggest a snack?"),
`clauses` (an English sentence as clauses, each with
its subject — the user, their team, someone else — and whether it is negated or unsure;
`restore_subject` puts back the "I" a chat message leaves out), `zh_clauses` (the same for
Chinese, which drops its subject freely: a clause without one continues the clause before, a
relation — 女朋友, 同事 — makes it someone else's),
`subjects` (facts whose values no lexicon lists — pets, diets, working hours, a tool named by
the key it fills, a job taken — keyed by what the clause is about, so a later value replaces
them), `mentions` (rules over that structure: technologies named in a clause about the user, a tool
dropped for another of its kind, labelled clauses, Chinese clauses about 我/我们), `dates`, `tech` (the technology lexicon, with
Pygments' language names), `places` (pycountry's countries and regions, large cities),
`style` (working-style topics and their keys), one module per language and kind of fact
(`en_identity`/`zh_identity`, `en_tools`/`zh_tools`, `en_preferences`/`zh_preferences`,
`en_tasks`/`zh_tasks`, `decisions`), `carried` (a later turn that states only a new value of
a key the session already holds: "28 now", "现在在小米", "Lately it's Helix"), `updates` (the same
for keys with open-ended values: working hours, diets, an event's date), `replaced` (a change
read from its shape, "switched from X to Y", "dropped X, it's all Y now", "从X换成Y": Y's memory
replaces the session's memory naming X, whatever their keys), `traits` (conditions such as colour blindness, and
accounts: "my GitHub username is …"), `moves` (a new job, place, role or team in shapes the identity rules do not read: "Since
starting at Monzo", "they made me head of …", 调到X分公司, 去X报到, 转岗做X), `standing` (a
standing request read by its structure: addressed to the assistant and lasting, keyed by its
topic), `corrections` (a correction or a value left behind in a shape no change phrase has:
"不是X，是Y", "我记错了，是Y", "it's Y, not X", "X is history", "X 我早就不用了"), `holds` (a new value read by
its structure: a clause about the user saying a state now holds — "First week at Mollie", "it's
NixOS now", "组里已经转到 Go 了" — keyed by its value's class, replacing the session's earlier value of
that class), `links` (one key per subject: a later change said in other words than its first
statement — "home is York now" after "I live in Leeds", "生酮停了，现在改成轻断食" — lands on that
statement's key, read by the class of its value: a diet, a sport or pastime, the language,
length, form or tone of answers, a technology's kind, a place, an organisation; a first statement
of those classes no reader read is kept under its class), `general` (the
floor under them all: a first-person statement no rule read, kept as it stands, keyed by its
structure — the head noun after "my"/"我的", the class of the value it names), `points` and
`signals`; `sameness` (`same_fact(a, b)`:
two statements of one fact in other words or another language, which placement's dedupe and
the driver's one-memory-per-fact both use); `slots` (a later turn's new version, moved date or
new quantity said without what it is of: "Bumped the app to Node 20", "延到12月24号", "现在 78 公斤了"
— it replaces the earlier memory of that slot) and `moved` (a value the turn leaves by name and
its new one, "从阿里云迁到腾讯云"; a choice reversed, "went the other way"); `learned` (the learned layer behind every reader: in
a sentence no reader read, a clause a linear gate scores as a lasting statement of the user's is
kept as said, typed by a linear classifier — weights in `data/clause_model.json.gz`, trained by
`bench/clause_model.py` — and a later turn that says a change replaces the earlier unkeyed
memory most like it).
"""

from memd.conversations.trivial import is_trivial
from memd.extraction.rules.extract import extract_rules
from memd.extraction.rules.points import is_memory_point, memory_points
from memd.extraction.rules.sameness import same_fact
from memd.extraction.rules.signals import (
    SessionSignals,
    Signal,
    SignalKind,
    session_signals,
    turn_signals,
)

__all__ = [
    "SessionSignals",
    "Signal",
    "SignalKind",
    "extract_rules",
    "is_memory_point",
    "is_trivial",
    "memory_points",
    "same_fact",
    "session_signals",
    "turn_signals",
]
