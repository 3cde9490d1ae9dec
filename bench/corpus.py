"""A deterministic generator of Markdown memory trees for the benchmarks.

`generate(root, files=N, seed=S)` writes N Markdown files laid out like a real memd tree
(`_core/`, `topics/<name>.md`, `agents/<id>/relationship.md`, `projects/<slug>/…`, `journal/`,
`archive/`, and free-form note folders). Every file has YAML front matter, a `#` title and
`##` sections holding list items (some with `<!-- memd … -->` metadata comments) or prose;
about 30% of the files contain Chinese sentences. Words are drawn from a Zipf-like
distribution over a realistic English + technical vocabulary, so posting lists have the skew
real notes have (a few very common words, a long tail). The same arguments always give the
same bytes.

`queries(info, n, seed)` draws a realistic query mix (topic names, vocabulary terms, Chinese
words, mixed questions) for the latency benchmarks; `term_queries` draws the 1–3 term OR
queries used by the FTS4/FTS5 comparison.

    python -m bench.corpus /tmp/tree --files 10000     # write a tree and print its size
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

TOPICS = """
vue react svelte angular typescript javascript python rust golang java kotlin swift docker
kubernetes terraform ansible postgres sqlite mysql redis kafka nginx linux macos git vim emacs
vscode testing security performance accessibility graphql grpc websockets electron tailwind
webpack vite pytest django fastapi flask pandas numpy pytorch llm embeddings cooking running
cycling travel finance photography guitar piano japanese chinese reading gardening coffee
sleep fitness parenting budgeting
""".split()

TECH = """
api endpoint request response latency throughput cache index query schema migration table
column row transaction lock queue worker thread process memory cpu disk socket server client
daemon service container image build deploy release pipeline branch commit merge rebase
review test fixture mock benchmark profile trace log metric alert dashboard config setting
environment variable secret token key certificate proxy router component prop state store
hook effect render template style layout module package dependency version upgrade install
compile bundle lint format type interface class function method argument return error
exception retry timeout backoff limit quota budget batch stream buffer file folder path
watcher event callback promise async await future channel signal handler parser tokenizer
embedding vector search ranking recall precision context prompt model agent session turn
summary journal backup restore snapshot replica shard partition cluster node pod volume
network dns tls http json yaml toml markdown sql orm crud rest webhook cron scheduler job
""".split()

COMMON = """
the of and to in is for on with that this it as be are was we by at from or an not have
has but they you all can will one more use when which their if would about there what so
out up into time only new some could them other than then now like also over after first
well way even because any these give day most us should need make work set get good keep
know take see want look find think tell ask try call feel leave put mean become show hear
play run move live believe hold bring happen write provide sit stand lose pay meet include
continue learn change lead understand watch follow stop create speak read allow add spend
grow open walk win offer remember love consider appear buy wait serve die send expect stay
fall cut reach kill remain suggest raise pass sell require report decide pull plan fix
small large long great little old big high different early young important few public bad
same able late hard major better best sure free clear full special easy whole strong simple
quick slow fast clean stable broken missing default local remote shared private manual
daily weekly monthly yesterday tomorrow morning evening weekend week month year today
project team meeting note idea question answer problem issue bug feature task goal decision
reason result example detail part place case point group number fact system program order
word thing family friend people life world school room home car food water book story
price money market cost plan list step page line text message email phone call doc draft
user customer partner manager colleague mentor doctor teacher student child parent kid
trip flight hotel train ticket visa passport map city street park beach mountain lake
recipe dinner lunch breakfast kitchen oven rice noodle soup salad bread cheese tea coffee
habit routine schedule calendar reminder deadline priority backlog roadmap milestone sprint
health exercise workout stretch diet weight distance pace race shoe knee injury recovery
camera lens photo light shadow color print album song chord scale practice lesson teacher
invoice tax account saving loan rent salary bill receipt insurance pension fund stock
preference opinion style tone language voice habit favorite dislike allergy birthday gift
""".split()

NAMES = "alice bob carol dave erin frank grace heidi ivan judy mallory oscar peggy trent victor wendy".split()
PROJECTS = """
atlas beacon cobalt delta ember falcon garnet harbor iris juniper kestrel lumen meridian
nimbus onyx pioneer quartz raven sierra tundra umbra vertex willow xenon yarrow zephyr
aurora basalt cedar dune
""".split()
AGENTS = ["claude", "coder", "planner", "tutor"]

ZH_WORDS = """
记忆 性能 组件 优化 系统 数据库 测试 部署 服务器 用户 项目 文件 索引 查询 缓存 接口 模型
代码 框架 配置 日志 错误 版本 更新 需求 设计 文档 会议 计划 任务 时间 问题 方法 结果 数据
网络 安全 团队 客户 产品 功能 页面 前端 后端 脚本 容器 集群 搜索 排序 召回 上下文 提示
习惯 喜欢 周末 早上 晚上 咖啡 跑步 旅行 照片 音乐 学习 阅读 健康 睡眠 家人 朋友 孩子 工作
""".split()
ZH_SUBJ = ["我", "我们", "团队", "用户", "他", "她", "这个项目", "老板"]
ZH_VERB = ["想", "需要", "打算", "喜欢", "决定", "正在", "希望", "计划"]
ZH_ACT = ["优化", "测试", "部署", "更新", "重构", "检查", "记录", "整理", "改进", "学习"]
ZH_TAIL = ["。", "。", "，效果很好。", "，下周完成。", "，但是还有问题。", "！"]


@dataclass(slots=True)
class CorpusInfo:
    """What `generate` wrote."""

    root: Path
    files: list[Path] = field(default_factory=list)
    bytes: int = 0
    sections: int = 0
    chinese_files: int = 0
    topics: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (
            f"{len(self.files):,} files, {self.sections:,} sections, {self.bytes / 1e6:.2f} MB,"
            f" {self.chinese_files / max(1, len(self.files)):.0%} with Chinese"
        )


class _Words:
    """Zipf-like sampling (weight 1/rank^s) over the vocabulary, shuffled per seed."""

    def __init__(self, rng: random.Random, s: float = 1.0) -> None:
        vocab = list(dict.fromkeys(COMMON + TECH + TOPICS))
        rng.shuffle(vocab)
        # Very common function words stay at the top, as they are in real text.
        top = [w for w in COMMON[:40]]
        rest = [w for w in vocab if w not in set(top)]
        self.vocab = top + rest
        weights = [1 / (r + 1) ** s for r in range(len(self.vocab))]
        self.cum = list(itertools.accumulate(weights))
        self.rng = rng

    def word(self) -> str:
        x = self.rng.random() * self.cum[-1]
        return self.vocab[bisect.bisect_left(self.cum, x)]

    def words(self, n: int) -> list[str]:
        return [self.word() for _ in range(n)]


class _Writer:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.w = _Words(self.rng)
        self.ids = itertools.count(1)

    # -- text pieces -------------------------------------------------------------------------
    def sentence(self, lo: int = 6, hi: int = 16) -> str:
        r = self.rng
        kind = r.random()
        t1, t2 = r.choice(TOPICS), r.choice(TOPICS)
        tech = r.choice(TECH)
        if kind < 0.12:
            s = f"prefers {t1} over {t2} for the {tech} {r.choice(TECH)}"
        elif kind < 0.22:
            s = f"uses {t1} with {t2} in the {r.choice(PROJECTS)} project"
        elif kind < 0.30:
            s = f"decided to {r.choice(COMMON[120:220])} the {tech} {r.choice(TECH)} before the release"
        elif kind < 0.36:
            s = f"{r.choice(NAMES)} said the {t1} {tech} needs a {r.choice(COMMON[220:300])} {r.choice(TECH)}"
        else:
            s = " ".join(self.w.words(r.randint(lo, hi)))
        return s[0].upper() + s[1:] + "."

    def zh_sentence(self) -> str:
        r = self.rng
        a, b = r.sample(ZH_WORDS, 2)
        form = r.random()
        if form < 0.4:
            s = f"{r.choice(ZH_SUBJ)}{r.choice(ZH_VERB)}{r.choice(ZH_ACT)}{a}{b}的{r.choice(ZH_WORDS)}"
        elif form < 0.7:
            s = f"{r.choice(ZH_SUBJ)}在 {r.choice(TOPICS)} 项目里{r.choice(ZH_ACT)}{a}和{b}"
        else:
            s = f"关于{a}：{r.choice(ZH_SUBJ)}{r.choice(ZH_VERB)}先{r.choice(ZH_ACT)}{b}，再看{r.choice(ZH_WORDS)}"
        return s + r.choice(ZH_TAIL)

    def item(self, zh: bool) -> str:
        r = self.rng
        text = self.zh_sentence() if zh and r.random() < 0.45 else self.sentence()
        if r.random() < 0.15:
            kind = r.choice(["preference", "decision", "knowledge", "task", "personal"])
            text += f" <!-- memd id=m_{next(self.ids):06x} type={kind} imp={r.randint(1, 9)} -->"
        return f"- {text}"

    def heading(self, zh: bool) -> str:
        r = self.rng
        if zh and r.random() < 0.3:
            return f"{r.choice(ZH_WORDS)}{r.choice(ZH_WORDS)}"
        n = r.randint(1, 3)
        words = [r.choice(TECH + COMMON[200:]) for _ in range(n)]
        return " ".join(words).capitalize()

    def section(self, zh: bool, size: int) -> str:
        """One `##` section of roughly `size` bytes."""
        r = self.rng
        lines = [f"## {self.heading(zh)}", ""]
        used = 0
        if r.random() < 0.3:
            para: list[str] = []
            while used < size:
                s = self.zh_sentence() if zh and r.random() < 0.4 else self.sentence(8, 20)
                para.append(s)
                used += len(s.encode()) + 1
            lines.append(" ".join(para))
        else:
            while used < size:
                it = self.item(zh)
                lines.append(it)
                used += len(it.encode()) + 1
        lines.append("")
        return "\n".join(lines)

    def document(self, title: str, kind: str, tags: Sequence[str], day: date,
                 n_sections: int, zh: bool, section_bytes: int) -> str:  # fmt: skip
        fm = (
            f"---\ntype: {kind}\ntags: [{', '.join(tags)}]\nupdatedAt: {day.isoformat()}\n"
            f"source: {self.rng.choice(['manual', 'manual', 'assistant', 'import'])}\n---\n"
        )
        body = [f"# {title}", ""]
        for _ in range(n_sections):
            size = int(section_bytes * self.rng.uniform(0.6, 1.4))
            body.append(self.section(zh, size))
        return fm + "\n".join(body)


def _layout(n: int, rng: random.Random) -> list[tuple[str, str, str]]:
    """(relative path, kind, title) for n files, like a real tree grown over a few years."""
    out: list[tuple[str, str, str]] = [
        ("_core/profile.md", "profile", "User Profile"),
        ("_core/preferences.md", "preference", "User Preferences"),
    ]
    for t in TOPICS:
        out.append((f"topics/{t}.md", "topic", t.capitalize()))
    for a in AGENTS:
        out.append((f"agents/{a}/relationship.md", "relationship", f"Working with {a}"))
    rest = max(0, n - len(out))
    day0 = date(2019, 1, 1)
    counters: dict[str, int] = {}
    for i in range(rest):
        x = rng.random()
        if x < 0.25:
            d = day0 + timedelta(days=i // 4)
            k = counters.setdefault(d.isoformat(), 0)
            counters[d.isoformat()] += 1
            suffix = f"-{k}" if k else ""
            out.append(
                (
                    f"journal/{d.year}/{d.isoformat()}{suffix}.md",
                    "journal",
                    f"Journal {d.isoformat()}",
                )
            )
        elif x < 0.45:
            p = rng.choice(PROJECTS)
            out.append(
                (f"projects/{p}/{rng.choice(TECH)}-{i}.md", "project", f"{p} {rng.choice(TECH)}")
            )
        elif x < 0.55:
            out.append(
                (
                    f"archive/{i // 200:03d}/{rng.choice(COMMON[200:])}-{i}.md",
                    "note",
                    f"Archived {i}",
                )
            )
        else:
            folder = rng.choice(["notes", "reading", "people", "recipes", "work", "ideas", "howto"])
            out.append((f"{folder}/{i // 250:03d}/{rng.choice(TECH + COMMON[200:])}-{i}.md", "note",
                        f"{rng.choice(COMMON[200:]).capitalize()} {rng.choice(TECH)}"))  # fmt: skip
    return out[:n] if n < len(out) else out


def _section_counts(
    kinds: Sequence[str], rng: random.Random, lo: int, hi: int, total: int | None
) -> list[int]:
    # Topic files are the long, curated ones: a few more sections each.
    # Core files are short (they go into every context); topic files are long and curated.
    counts = [
        2 if k in ("profile", "preference") else rng.randint(lo, hi) + (3 if k == "topic" else 0)
        for k in kinds
    ]
    n = len(counts)
    fixed = {i for i, k in enumerate(kinds) if k in ("profile", "preference")}
    if total is None:
        return counts
    cap = max(hi + 3, -(-total // max(1, n)) + 3)
    diff = total - sum(counts)
    while diff:
        i = rng.randrange(n)
        if i in fixed:
            continue
        if diff > 0 and counts[i] < cap:
            counts[i] += 1
            diff -= 1
        elif diff < 0 and counts[i] > 1:
            counts[i] -= 1
            diff += 1
    return counts


def generate(
    root: Path,
    files: int = 10_000,
    *,
    seed: int = 42,
    sections: tuple[int, int] = (2, 3),
    total_sections: int | None = None,
    section_bytes: int = 230,
    zh_share: float = 0.30,
) -> CorpusInfo:
    """Write `files` Markdown files below `root` (created) and describe them.

    `sections` is the (min, max) number of `##` sections per file; `total_sections` makes the
    total exact. `section_bytes` is the mean size of a section's body.
    """
    wr = _Writer(seed)
    rng = wr.rng
    info = CorpusInfo(root=root, topics=list(TOPICS))
    layout = _layout(files, rng)
    counts = _section_counts(
        [k for _, k, _ in layout], rng, sections[0], sections[1], total_sections
    )
    day0 = date(2024, 1, 1)
    made: set[Path] = set()
    for (rel, kind, title), n_sec in zip(layout, counts, strict=True):
        zh = rng.random() < zh_share
        if kind == "topic":
            tags = [rel.split("/")[1][:-3], rng.choice(TECH)]
        else:
            tags = rng.sample(TOPICS, 2)
        day = day0 + timedelta(days=rng.randrange(700))
        text = wr.document(title, kind, tags, day, n_sec, zh, section_bytes)
        path = root / rel
        if path.parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(path.parent)
        data = text.encode()
        path.write_bytes(data)
        info.files.append(path)
        info.bytes += len(data)
        info.sections += n_sec
        info.chinese_files += zh
    return info


# -- queries --------------------------------------------------------------------------------
def queries(n: int, seed: int = 7) -> list[tuple[str, str]]:
    """(class, query) pairs: the mix an assistant sends to `context` and `search`."""
    rng = random.Random(seed)
    w = _Words(random.Random(seed + 1))
    out: list[tuple[str, str]] = []
    for _ in range(n):
        x = rng.random()
        t = rng.choice(TOPICS)
        if x < 0.25:
            form = rng.choice([
                "how should I set up {t} {a}", "{t} {a} {b}", "what do I prefer for {t}",
                "help me with the {t} {a} {b}", "{t}",
            ])  # fmt: skip
            q = form.format(t=t, a=rng.choice(TECH), b=rng.choice(TECH))
            out.append(("topic", q))
        elif x < 0.55:
            ws: list[str] = []
            while len(ws) < rng.randint(2, 4):
                cand = w.word()
                if cand not in COMMON[:40]:  # nobody searches for "the of"
                    ws.append(cand)
            out.append(("terms", " ".join(ws)))
        elif x < 0.70:
            out.append(("question", f"what did we decide about the {rng.choice(PROJECTS)} "
                        f"{rng.choice(TECH)} {rng.choice(TECH)}"))  # fmt: skip
        elif x < 0.82:
            out.append(("chinese-words", " ".join(rng.sample(ZH_WORDS, rng.randint(1, 3)))))
        elif x < 0.90:
            out.append(("chinese-sentence",
                        f"{rng.choice(['怎么', '如何', '我想'])}{rng.choice(ZH_ACT)}{rng.choice(ZH_WORDS)}的{rng.choice(ZH_WORDS)}"))  # fmt: skip
        else:
            out.append(("mixed", f"{t} {rng.choice(ZH_WORDS)} {rng.choice(TECH)}"))
    return out


def term_queries(n: int, seed: int = 11) -> list[list[str]]:
    """1–3 term queries drawn from the corpus vocabulary (10% carry a Chinese word)."""
    rng = random.Random(seed)
    w = _Words(random.Random(seed + 1))
    out = []
    for _ in range(n):
        k = rng.randint(1, 3)
        ts: list[str] = []
        while len(ts) < k:
            cand = rng.choice(ZH_WORDS) if rng.random() < 0.1 else w.word()
            if cand not in COMMON[:40] and cand not in ts:
                ts.append(cand)
        out.append(ts)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root", type=Path)
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args()
    info = generate(args.root, args.files, seed=args.seed)
    print(info.summary())


if __name__ == "__main__":
    main()
