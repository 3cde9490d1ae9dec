"""The offline extractor: English and Chinese patterns for the facts people state about themselves.

Used when no LLM is configured. It reads only user turns and proposes the same
`ExtractedMemory` values the LLM extractor does: standalone statements ("User's name
is Sam", "用户喜欢简洁的代码") with a type, an importance on the seed-004 scale
(identity 8–10, skills 6–8, preferences 4–6, transient 1–3), the turn they came from,
and a `subject` key for single-valued facts (`name`, `employer`, `city`,
`tool:testing`, …) so a later "I switched to vitest" supersedes "I use jest".

It is deliberately conservative: a sentence that is a question, or an object that is
a pronoun, yields nothing. Missing a fact is cheaper than storing a wrong one.

Modules: `extract` (the driver), `common` (sentences, questions, pronouns, importances),
`dates`, `tech` (the technology lexicon), and one module per language and kind of fact:
`en_identity`/`zh_identity`, `en_tools`/`zh_tools`, `en_preferences`/`zh_preferences`,
`en_tasks`/`zh_tasks`.
"""

from memd.conversations.trivial import is_trivial
from memd.extraction.rules.extract import extract_rules

__all__ = ["extract_rules", "is_trivial"]
