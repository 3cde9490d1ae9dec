"""Subjects the lexicons have no key for, keyed by the clause's shape: pets, diets, working hours,
and whatever the user names with "my X is called Y" / "我的X叫Y".

The other rules key a fact by its value: a known employer, city or tool gives `employer`, `city`,
`tool:testing`. A fact whose values are open-ended — a pet's name, a diet, the hours someone
works — has no lexicon of values to key it by, so a later "we adopted a rescue dog, Juniper"
could not replace "I've got a cat named Miso". Here the key comes from what the clause is about
instead, the noun phrase of a clause whose subject is the user:

- `pet`: the user has, got, adopted or keeps an animal ("I have a parrot called Kiwi", "my dog
  Rocket", "Mine is a greyhound called Pepper", "我养了一条柯基，叫可乐", "家里养的是一只布偶猫");
- `diet`: what the user eats ("I'm vegetarian", "I went fully vegan", "I don't eat pork",
  "I'm eating meat again", "我吃素", "改成纯素了", "我不吃香菜");
- `schedule`: when the user works, from a clause about their work with hours or a shift
  ("I'm usually online 8am to 4pm Eastern", "I'm on the late shift now, 2pm to 10pm",
  "I work nights", "我每天早上九点到下午六点上班", "我现在十点才上班");
- `named:<noun>`: anything else the user gives a name ("my laptop is called Zeus",
  "我的猫叫咪咪" is `pet`).

The key is the same whatever the value, so any later clause with that key and a new value
supersedes the old one through placement. A clause that adds rather than replaces ("we also got
a kitten", "another dog", "我还养了…") keeps the fact but not the key: two pets are not one pet
changed. Someone else's pet, diet or hours ("my sister's dog", "my sister just went vegan",
"我同事养了只猫"), a negated or unsure clause and a question say nothing of the user.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memd.core.models import ExtractedMemory
from memd.extraction.rules.clauses import en_clauses
from memd.extraction.rules.common import (
    IMP_EMPLOYER,
    IMP_FAMILY,
    IMP_PREFERENCE,
    IMP_ROLE,
    Ctx,
    article,
    clean,
    third_person,
)
from memd.extraction.rules.tech import lookup_tech
from memd.extraction.rules.zh_clauses import ZH_OTHER_WORDS, zh_clauses

IMP_DIET = 6
IMP_SCHEDULE = IMP_PREFERENCE

# -- pets ---------------------------------------------------------------------------------------
ANIMALS = (
    r"(?:dogs?|cats?|pupp(?:y|ies)|kittens?|kitty|parrots?|budgies?|budgerigars?|cockatiels?"
    r"|canar(?:y|ies)|hamsters?|guinea\s+pigs?|rabbits?|bunn(?:y|ies)|ferrets?|turtles?"
    r"|tortoises?|snakes?|lizards?|geckos?|iguanas?|goldfish|fish|axolotls?|chinchillas?"
    r"|rats?|mice|gerbils?|horses?|pon(?:y|ies)|chickens?|hens?|ducks?|goats?|retrievers?"
    r"|labradors?|labradoodles?|greyhounds?|whippets?|corgis?|poodles?|beagles?|huskies|husky"
    r"|terriers?|spaniels?|shepherds?|collies?|dachshunds?|pugs?|bulldogs?|chihuahuas?"
    r"|shiba(?:\s+inu)?s?|schnauzers?|boxers?|rottweilers?|dobermans?|mutts?|tabb(?:y|ies)"
    r"|maine\s+coons?|ragdolls?|sphynx|siamese)"
)
_NAME = r"(?-i:(?P<name>[A-Z][\w'\-]+))"
# "a rescue dog, Juniper", "a greyhound called Pepper", "two cats": the animal and its name.
_EN_ANIMAL = (
    r"(?P<pet>(?:(?:an?|two|three|one|a\s+couple\s+of)\s+)?(?:[\w\-]+\s+){0,2}?" + ANIMALS + r")"
    r"(?:\s*,?\s*(?:(?:named|called)\s+)?" + _NAME + r")?"
)
_EN_PET_RES = (
    # "I have a parrot called Kiwi", "We adopted a rescue dog, Juniper", "Mine is a greyhound…"
    re.compile(
        r"\b(?:I|we)(?:'ve|\s+have)?\s+(?:just\s+|recently\s+|finally\s+|also\s+)?(?:have|has|got"
        r"|adopted|rescued|own|keep|brought\s+home|took\s+in|ha(?:ve|s)\s+got)\s+" + _EN_ANIMAL,
        re.I,
    ),
    re.compile(r"\bmine\s+is\s+" + _EN_ANIMAL, re.I),
    # "I've got two kids and a golden retriever named Biscuit": an animal after others one has.
    re.compile(
        r"\b(?:I|we)(?:'ve|\s+have)?\s+(?:got|have|has)\s+[^.;!?]{1,40}?\s+(?:and|plus)\s+"
        + _EN_ANIMAL.replace("(?P<pet>", "(?P<pet>(?=(?:an?|one|two|three)\\s)", 1),
        re.I,
    ),
    # "My dog Rocket sleeps under my desk", "my cat's name is Miso", "my cat is called Miso".
    re.compile(
        r"\bmy\s+(?P<pet>(?:[\w\-]+\s+)?" + ANIMALS + r")(?:'s\s+name\s+is|\s+is\s+(?:called"
        r"|named))?\s+" + _NAME,
        re.I,
    ),
)
# Someone else's animal: "my sister's dog", "Buddy is my sister's".
THEIRS_RE = re.compile(
    r"\b(?:my|our)\s+\w+'s\s+" + ANIMALS + r"|\b(?:his|her|their)\s+" + ANIMALS, re.I
)
_ADDED_RE = re.compile(r"\b(?:also|too|another|second|third|as\s+well)\b", re.I)


def _en_pet(text: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    if THEIRS_RE.search(text):
        return
    for pattern in _EN_PET_RES:
        m = pattern.search(text)
        if m is None:
            continue
        pet = clean(m.group("pet"))
        pet = re.sub(r"^(?:a|an|one)\s+", "", pet, flags=re.I)
        name = m.group("name")
        words = f"{pet} called {name}" if name else pet
        key = "" if _ADDED_RE.search(text) else "pet"
        yield ctx.mem(f"User has a pet: {words}", "personal", IMP_FAMILY, subject=key)
        return


# -- diets --------------------------------------------------------------------------------------
_DIETS = (
    r"(?P<diet>vegetarian|vegan|pescatarian|pescetarian|keto|paleo|gluten[- ]free|dairy[- ]free"
    r"|lactose[- ]intolerant|plant[- ]based|halal|kosher|carnivore|flexitarian)"
)
_EN_DIET_RES = (
    re.compile(
        r"\bI(?:'m|\s+am)\s+(?:now\s+|fully\s+|strictly\s+|mostly\s+|still\s+)?(?:a\s+)?" + _DIETS,
        re.I,
    ),
    re.compile(
        r"\bI\s+(?:just\s+)?(?:went|'ve\s+gone|have\s+gone|turned)\s+(?:fully\s+)?" + _DIETS, re.I
    ),
    # "I don't eat pork", "I eat fish now", "I'm eating meat again".
    re.compile(
        r"\bI(?:'m|\s+am)?\s+(?P<neg>don't\s+|do\s+not\s+|never\s+|no\s+longer\s+)?(?:eat|eating)\s+"
        r"(?P<food>(?:red\s+)?(?:meat|fish|pork|beef|chicken|dairy|eggs|gluten|seafood|shellfish"
        r"|nuts|sugar|carbs))\b(?P<tail>\s+(?:now|again|these\s+days|anymore))?",
        re.I,
    ),
)


_EN_ALLERGY_RE = re.compile(
    r"\bI(?:'m|\s+am)\s+(?:severely\s+|very\s+|quite\s+)?allergic\s+to\s+"
    r"(?P<what>[\w\- ]{2,30}?)(?=\s*(?:[,.;!]|$)|\s+(?:so|and|but|because)\b)",
    re.I,
)


# The allergy named as a noun: "I have a tree-nut allergy", "I've got a bad pollen allergy".
_EN_ALLERGY_NOUN_RE = re.compile(
    r"\bI\s+(?:have|'ve\s+got|have\s+got|got)\s+(?:an?\s+)?(?:(?:severe|bad|mild|serious|slight)\s+)?"
    r"(?P<what>[\w\-]+(?:\s+[\w\-]+)?)\s+(?:allergy|allergies|intolerance)\b",
    re.I,
)


def _en_diet(text: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    if a := _EN_ALLERGY_RE.search(text):
        # Several allergies are several facts: no key.
        yield ctx.mem(f"User is allergic to {a.group('what')}", "personal", IMP_DIET)
    elif a := _EN_ALLERGY_NOUN_RE.search(text):
        yield ctx.mem(
            f"User has a {a.group('what')} {a.group(0).split()[-1]}", "personal", IMP_DIET
        )
    for pattern in _EN_DIET_RES:
        m = pattern.search(text)
        if m is None:
            continue
        groups = m.groupdict()
        if groups.get("diet"):
            content = f"User is {groups['diet'].lower()}"
        elif groups.get("neg"):
            content = f"User doesn't eat {groups['food'].lower()}"
        elif groups.get("tail"):
            content = f"User eats {groups['food'].lower()} {clean(groups['tail']).lower()}"
        else:
            continue
        yield ctx.mem(content, "personal", IMP_DIET, subject="diet")
        return


# -- working hours ------------------------------------------------------------------------------
_HOUR = r"\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)?"
_EN_HOURS_RE = re.compile(
    r"\b" + _HOUR + r"\s*(?:to|-|–|until|till)\s*" + _HOUR + r"(?!\d)"
    r"|\b(?:night|late|early|day|morning|evening|graveyard|swing)\s+shifts?\b"
    r"|\b(?:work|working|on)\s+(?:nights|mornings|evenings|weekends|days)\b"
    r"|\b(?:fully\s+)?remote\b|\bfrom\s+home\b|\bpart[- ]time\b|\bfull[- ]time\b"
    # where the user works is part of their working week: "I commute to the office every day"
    r"|\b(?:in|to|into|at|from)\s+the\s+office\b|\bhybrid\b|\bon[- ]site\b",
    re.I,
)
_EN_WORK_RE = re.compile(
    r"\b(?:I(?:'m|\s+am)?\s+(?:usually\s+|normally\s+|mostly\s+|generally\s+|now\s+)?"
    r"(?:work|working|online|on|available|code|coding|start|off|commute|go)|my\s+(?:shift|schedule"
    r"|(?:[a-z]+\s+)?hours)|we\s+(?:went|are|'re)\s+(?:fully\s+)?remote)\b",
    re.I,
)


def _en_schedule(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    clauses = en_clauses(sentence)
    if not clauses or any(c.subject == "other" for c in clauses):
        return
    about = [c for c in clauses if c.subject in ("I", "we") and not c.unsure and not c.negated]
    work = next((c for c in about if _EN_WORK_RE.search(c.text)), None)
    if work is None or not _EN_HOURS_RE.search(sentence):
        return
    # From the clause about the user's work on ("New baby, so my coding hours are …").
    start = max(0, sentence.find(work.text))
    text = clean(re.split(r",?\s+(?:so|because|which|if)\b", sentence[start:])[0])
    text = re.sub(r"^My\b", "my", text)
    yield ctx.mem(f"User's working hours: {third_person(text)}", "personal", IMP_SCHEDULE,
                  subject="schedule")  # fmt: skip


# -- a job taken -------------------------------------------------------------------------------
# "I took a job at Canva", "started a job as a junior developer at Monzo", "accepted an offer
# from Stripe": the employer (and role) of a job the user took, whatever the verb.
_EN_JOB_RE = re.compile(
    r"(?:\bI(?:'ve|\s+have)?\s+|^\s*|\band\s+)(?:just\s+|finally\s+)?(?:took|taken|started|accepted|got|landed|began"
    r"|signed)\s+(?:a|an|the|my)?\s*(?:new\s+|full-time\s+)?(?:job|position|role|offer|gig)\s+"
    r"(?:as\s+(?:an?\s+)?(?P<role>[a-z][\w\- ]{2,40}?)\s+)?(?:at|with|from)\s+"
    r"(?-i:(?P<org>[A-Z][\w&.\-]*(?:\s+[A-Z][\w&.\-]*)?))",
    re.I,
)


def _en_job(text: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    m = _EN_JOB_RE.search(text)
    if m is None or m.group("org").lower() in ("a", "the", "home"):
        return
    yield ctx.mem(f"User works at {m.group('org')}", "personal", IMP_EMPLOYER, subject="employer")
    if role := m.group("role"):
        yield ctx.mem(f"User works as {article(role)} {role}", "personal", IMP_ROLE, subject="role")


# -- named things -------------------------------------------------------------------------------
_EN_NAMED_RE = re.compile(
    r"\bmy\s+(?P<noun>[a-z][a-z\-]+(?:\s+[a-z][a-z\-]+)?)(?:'s\s+name\s+is|\s+is\s+(?:called"
    r"|named))\s+" + _NAME,
    re.I,
)
# What is named elsewhere: a person's name is `name`, a relation's is theirs, a project's is
# the project's (other rules).
_NOT_NAMED = frozenset(
    "name nickname username handle wife husband partner spouse girlfriend boyfriend daughter son "
    "kid child baby mom mum mother dad father brother sister boss manager friend project app "
    "repo repository company startup team".split()
)


def _en_named(text: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    m = _EN_NAMED_RE.search(text)
    if m is None:
        return
    noun = m.group("noun").lower()
    if noun.split()[-1] in _NOT_NAMED or re.fullmatch(ANIMALS, noun.split()[-1], re.I):
        return
    yield ctx.mem(f"User's {noun} is called {m.group('name')}", "personal", IMP_FAMILY,
                  subject=f"named:{noun}")  # fmt: skip


# -- a tool named by the key it fills ------------------------------------------------------------
# "Our package manager is yarn", "CI runs on Travis for us", "我们的数据库是 MySQL": the clause is
# about the key itself (its noun is the subject), so the value is that key's, even a value the
# lexicon does not know — and a later value of the same key replaces it.
_KEY_NOUNS = {
    "ci": "tool:ci",
    "ci/cd": "tool:ci",
    "package manager": "tool:package-manager",
    "test runner": "tool:testing",
    "tests": "tool:testing",
    "testing framework": "tool:testing",
    "test framework": "tool:testing",
    "editor": "editor",
    "ide": "editor",
    "shell": "tool:shell",
    "terminal": "tool:terminal",
    "database": "tool:database",
    "db": "tool:database",
    "bundler": "tool:bundler",
    "build tool": "tool:build",
    "browser": "browser",
    "os": "os",
    "operating system": "os",
    "hosting": "tool:hosting",
    "host": "tool:hosting",
    "包管理器": "tool:package-manager",
    "包管理工具": "tool:package-manager",
    "编辑器": "editor",
    "数据库": "tool:database",
    "测试框架": "tool:testing",
    "测试工具": "tool:testing",
    "依赖管理": "tool:package-manager",
    "依赖管理工具": "tool:package-manager",
    "终端": "tool:terminal",
    "浏览器": "browser",
    "操作系统": "os",
}
_PREFERENCE_KEYS = frozenset({"editor", "os", "browser", "tool:shell", "tool:terminal"})
_NOUN_ALT = "|".join(
    sorted((re.escape(n) for n in _KEY_NOUNS if n.isascii()), key=len, reverse=True)
)
_EN_KEYED_RE = re.compile(
    r"^(?:(?:my|our|the)\s+)?(?P<noun>"
    + _NOUN_ALT
    + r")\s+(?:is|are|'s|runs?\s+(?:on|with)|is\s+on"
    r"|is\s+hosted\s+on|lives\s+on|uses?)\s+(?:still\s+|now\s+|currently\s+|just\s+)?"
    r"(?P<value>[A-Za-z][\w.+#\-]*(?:\s+[A-Z][\w.+#\-]*)?)\s*(?:for\s+(?:us|me|now)\b.*)?$",
    re.I,
)
# "Firefox is my browser for dev stuff", "Postgres is our database".
_EN_KEYED_BACK_RE = re.compile(
    r"^(?P<value>[A-Za-z][\w.+#\-]*(?:\s+[A-Z][\w.+#\-]*)?)\s+is\s+(?:still\s+)?(?:my|our)\s+"
    r"(?:go-to\s+|main\s+|default\s+|daily\s+)?(?P<noun>" + _NOUN_ALT + r")\b",
    re.I,
)
_ZH_NOUN_ALT = "|".join(n for n in _KEY_NOUNS if not n.isascii())
# The Chinese verbs a key's value follows, stating it or changing it: "数据库是 MySQL",
# "测试框架换成 Vitest 了", "依赖管理改用 uv 了", "CI 已经迁到 GitHub Actions 上了".
_ZH_KEY_VERB = (
    r"(?:已经|现在|目前|都|全部|也|又)*(?:是|用的是|用|跑在|换成|改成|改用|换用|改为|切到|切换到|迁到"
    r"|迁移到|转到)了?"
)
_ZH_KEYED_RE = re.compile(
    r"^(?:我们?的)?(?:项目的)?(?P<noun>" + _ZH_NOUN_ALT + r"|CI)\s*" + _ZH_KEY_VERB + r"\s*"
    r"(?P<value>[A-Za-z][\w.+#\-]*(?:\s+[A-Z][\w.+#\-]*)?)\s*(?:上)?(?:了)?$",
    re.I,
)
# Where the user's things run, by the verb: "我们的服务部署在阿里云", "服务已经全部迁到腾讯云了",
# "everything is deployed on Render": the value is the hosting, whatever its name (a Chinese cloud
# is named …云).
_HOSTED_RE = re.compile(
    r"(?:部署在|托管在|跑在|迁到|迁移到|搬到|切到)(?P<zh>[\u4e00-\u9fff]{1,4}云)"
    r"|\b(?:deployed|hosted)\s+(?:on|to)\s+(?-i:(?P<en>[A-Z][\w.\-]*(?:\s+[A-Z][\w.\-]*)?))",
    re.I,
)


def keyed_tool(clause: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    """A clause whose subject is the key a tool fills ("Our package manager is yarn", "CI runs
    on Travis for us", "我们的数据库是 MySQL"): the tool under that key."""
    text = clause.strip()
    m = _EN_KEYED_RE.match(text) or _EN_KEYED_BACK_RE.match(text) or _ZH_KEYED_RE.match(text)
    if m is None:
        return
    noun = m.group("noun").lower()
    key = _KEY_NOUNS.get(noun, "")
    tech = lookup_tech(m.group("value"))
    if tech is not None and tech.subject.startswith(key + ":"):
        key = tech.subject  # "依赖管理改用 uv": Python's package manager, as the lexicon keys it
    value = tech.name if tech is not None else m.group("value")
    if not key or value.lower() in (
        "it",
        "this",
        "that",
        "the",
        "a",
        "an",
        "not",
        "broken",
        "down",
    ):
        return
    if tech is None and not value[:1].isupper():
        return
    if tech is not None and tech.subject and tech.subject.split(":")[:2] != key.split(":")[:2]:
        return  # "our database is Vercel": the value is another key's, not a misfiled one
    type_ = "preference" if key in _PREFERENCE_KEYS else "skill"
    if not noun.isascii():
        content = f"用户的{noun}是{value}"
    else:
        what = {"tool:ci": "CI", "tool:testing": "test runner"}.get(key, noun)
        content = f"User uses {value} as their {what}"
    yield ctx.mem(content, type_, IMP_PREFERENCE + 1, subject=key)


_ZH_UNSURE_RE = re.compile(r"^(?:如果|假如|假设|要是|万一|打算|准备|考虑|想)")


def hosted(clause: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    """Where the user's or their team's things are deployed, named by the verb (see `_HOSTED_RE`)."""
    m = _HOSTED_RE.search(clause)
    if m is None:
        return
    value = m.group("zh") or m.group("en")
    tech = lookup_tech(value)
    if tech is not None and tech.subject not in ("", "tool:hosting"):
        return
    name = tech.name if tech is not None else value
    content = f"用户的服务部署在{name}" if m.group("zh") else f"User deploys to {name}"
    yield ctx.mem(content, "skill", IMP_PREFERENCE + 1, subject="tool:hosting")


def en_subjects(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    """Pets, diets, working hours and named things the user states in an English sentence,
    each under a key derived from what the clause is about (see the module's docstring)."""
    clauses = [c for c in en_clauses(sentence) if not c.unsure]
    for clause in clauses:
        if clause.subject not in ("I", "we", "none"):
            continue
        # "I don't eat pork": the negation is the diet; its patterns read the user's own "I".
        yield from _en_diet(clause.text, ctx)
        if not clause.negated:
            yield from _en_pet(clause.text, ctx)
            yield from _en_named(clause.text, ctx)
            yield from _en_job(clause.text, ctx)
    for clause in clauses:
        # Its own pattern anchors the subject (the key noun): "Our package manager" is no manager.
        if not clause.negated:
            yield from keyed_tool(clause.text, ctx)
            if clause.subject in ("I", "we", "none", "project"):
                yield from hosted(clause.text, ctx)
    yield from _en_schedule(sentence, ctx)


# -- Chinese ------------------------------------------------------------------------------------
_ZH_ANIMALS = (
    r"(?:猫咪|小猫|猫|小狗|狗狗|狗|柯基|金毛|泰迪|哈士奇|柴犬|边牧|拉布拉多|萨摩耶|比熊|博美|柴犬"
    r"|布偶猫?|英短|美短|橘猫|暹罗猫?|仓鼠|兔子|鹦鹉|乌龟|金鱼|龙猫|刺猬|蜥蜴|蛇|八哥)"
)
# "我养了一条柯基，叫可乐", "现在家里养的是一只布偶猫", "我家有一只仓鼠叫团子", "我的猫叫咪咪".
_ZH_PET_RE = re.compile(
    r"(?:^|[，,。])\s*(?P<lead>(?:现在|目前|后来)?(?:我家里|我们家里|我家|我们家|我|家里|家中)(?:现在|目前)?"
    r"(?:也|还|又)?(?:养了|养着|养的是|养|有|新养了|领养了|收养了))"
    r"(?P<pet>(?:[一两二三四五几]\s*[只条个])?[\u4e00-\u9fff]{0,3}?" + _ZH_ANIMALS + r")"
    r"(?:[，,]?\s*(?:叫|名字叫|名叫)(?P<name>[\u4e00-\u9fff\w]{1,6}))?"
    r"|(?:^|[，,。])\s*(?:更正一下[，,]?\s*)?我(?:的|家的?)(?P<pet2>" + _ZH_ANIMALS + r")"
    r"(?:叫|名字叫|名叫|的名字是)(?P<name2>[\u4e00-\u9fff\w]{1,6})"
)
_ZH_ADDED_RE = re.compile(r"(?:也|还|又|另外)养")


def _zh_pet(body: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    m = _ZH_PET_RE.search(body)
    if m is None:
        return
    start = m.start() + (1 if body[m.start()] in "，,。" else 0)
    span = body[start : m.end()].strip()
    key = "" if _ZH_ADDED_RE.search(span) else "pet"
    content = "用户" + (span[1:] if span.startswith("我") else span)
    yield ctx.mem(content, "personal", IMP_FAMILY, subject=key)


_ZH_DIET_RE = re.compile(
    r"我(?:现在|目前|已经|一直)?(?:是)?(?P<diet>吃素|素食者?|纯素食?者?|全素|吃全素|清真)"
    r"|(?:改成|改吃|变成|开始吃)了?(?P<diet2>纯素|吃素|素食|全素)"
    # "我在减肥，晚上不吃主食": a clause without a subject after one about 我 goes on about them
    r"|我(?:(?!的?(?:"
    + ZH_OTHER_WORDS
    + r"))[^，,。；;]{1,6}[，,])?(?:现在|目前|一直|平时|晚上|早上|中午)?(?:不吃|不能吃|忌口)(?P<food>[\u4e00-\u9fff]{1,4}?)(?=[，,。；;、]|$|了|的)"
)


_ZH_ALLERGY_RE = re.compile(r"我对(?P<what>[\u4e00-\u9fff\w]{1,8}?)过敏")


def _zh_diet(body: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    if a := _ZH_ALLERGY_RE.search(body):
        yield ctx.mem(f"用户对{a.group('what')}过敏", "personal", IMP_DIET)
    m = _ZH_DIET_RE.search(body)
    if m is None:
        return
    if m.group("food"):
        content = f"用户不吃{m.group('food')}"
    else:
        diet = m.group("diet") or m.group("diet2")
        content = f"用户{'' if diet.startswith('吃') else '是'}{diet}"
    yield ctx.mem(content, "personal", IMP_DIET, subject="diet")


_ZH_TIME = (
    r"(?:[早上中下晚午]+[上午]?)?\s*(?:\d{1,2}|[一二三四五六七八九十两]{1,3})\s*(?:点|:\d{2})"
)
_ZH_SCHEDULE_RE = re.compile(
    r"(?P<when>" + _ZH_TIME + r"(?:半)?(?:\s*(?:到|至|-|~)\s*" + _ZH_TIME + r"(?:半)?)?"
    r"|夜班|早班|晚班|白班|倒班|弹性工作制?|远程办公|在家办公|远程工作)"
)
_ZH_WORK_RE = re.compile(r"上班|下班|工作|办公|值班|写代码|开工|打卡")


def _zh_schedule(clause: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    if not _ZH_WORK_RE.search(clause) or _ZH_SCHEDULE_RE.search(clause) is None:
        return
    if not clause.startswith(("我", "我们")):
        return
    text = clean(clause)
    yield ctx.mem("用户" + text.removeprefix("我们").removeprefix("我"), "personal", IMP_SCHEDULE,
                  subject="schedule")  # fmt: skip


def zh_subjects(body: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    """Pets and diets the user states in a Chinese sentence (keys as in English)."""
    yield from _zh_pet(body, ctx)
    yield from _zh_diet(body, ctx)
    texts = [c.strip() for c in re.split(r"[，,；;]", body) if c.strip()]
    for clause in zh_clauses(texts, carried=ctx.session.spoke):
        yield from keyed_tool(clause.text, ctx)
        if clause.subject not in ("other", "ask") and not _ZH_UNSURE_RE.match(clause.text):
            yield from hosted(clause.text, ctx)


def zh_schedule(clause: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    """When the user works, from one Chinese clause about them ("我每天早上九点到下午六点上班",
    "我现在十点才上班")."""
    yield from _zh_schedule(clause, ctx)
