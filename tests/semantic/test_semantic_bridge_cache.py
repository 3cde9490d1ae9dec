"""The bridge's dictionary kept compact in a cache file: written once, mapped after, answering
exactly as the parsed one; a damaged or foreign file is built again, an unwritable folder
leaves the parsed dictionary in use."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from memd.semantic import bridge_cache
from memd.semantic.bridge import Dictionary, to_chinese, to_english
from memd.semantic.packed import Packed
from tests.semantic.test_semantic_bridge import CEDICT, FREQ, HAVE_DICTIONARY

DATA = CEDICT.encode()  # stands for the dictionary file's bytes: only its digest is used
QUERIES_ZH = ["陶艺课是什么时候", "参加互助小组", "测试框架", "喜欢数据库"]
QUERIES_EN = ["test the database", "join a pottery class", "help each other", "frame"]


class Parses:
    """`parse` for `bridge_cache.load`: the small dictionary, counting the calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> Dictionary:
        self.calls += 1
        return Dictionary.from_lines(CEDICT.splitlines(), FREQ)


def answers(d: Dictionary) -> list[object]:
    words = ["测试", "測試", "互助", "王", "课", "数据库", "喜欢", "不在"]
    return ([d.lookup(w) for w in words] + [d.english_terms(w) for w in words]
            + [d.split(q) for q in QUERIES_ZH] + [to_english(q, d) for q in QUERIES_ZH]
            + [to_chinese(q, d) for q in QUERIES_EN] + [len(d), d.max_len])  # fmt: skip


def test_written_once_then_mapped_and_answers_alike(tmp_path: Path) -> None:
    parse = Parses()
    first = bridge_cache.load(tmp_path / "c", DATA, parse)
    second = bridge_cache.load(tmp_path / "c", DATA, parse)
    assert parse.calls == 1
    assert [p.name for p in (tmp_path / "c").iterdir()] == [
        bridge_cache.path_for(tmp_path / "c", DATA).name
    ]
    assert isinstance(second.packed_parts()[1], memoryview)  # read from the mapped file
    assert first.origin == "parsed, its cache file written"
    assert second.origin == "mapped from its cache file"
    assert answers(first) == answers(second) == answers(parse())


def test_packed_map_reads_back_from_its_bytes() -> None:
    pairs = {f"键{i}": f"value {i} 值" for i in range(500)} | {"": "empty key", "k": ""}
    packed = Packed(pairs.items())
    back, end = Packed.from_buffer(memoryview(b"\0" * 8 + packed.to_bytes()), 8)
    assert end == 8 + len(packed.to_bytes())
    assert dict(back.items()) == pairs
    assert all(back.get(k) == v for k, v in pairs.items())
    assert back.get("missing") is None and "missing" not in back


def test_the_hash_is_the_same_in_every_process(tmp_path: Path) -> None:
    """A file written by one process is read by another: the keys' hash may not depend on
    the process (Python's `hash` of a string does)."""
    bridge_cache.load(tmp_path / "c", DATA, Parses())
    code = (
        "import sys; from pathlib import Path; from memd.semantic import bridge_cache;"
        "d = bridge_cache.read(Path(sys.argv[1])); print(d.lookup('测试').senses[0],"
        " d.chinese_words('database'))"
    )
    for seed in ("1", "2"):
        out = subprocess.run(
            [sys.executable, "-c", code, str(bridge_cache.path_for(tmp_path / "c", DATA))],
            capture_output=True, text=True, check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )  # fmt: skip
        assert out.stdout.strip() == "to test (machinery etc) ['数据库']"


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b[: len(b) // 2],  # cut short
        lambda b: b"",
        lambda b: b"not a dictionary at all" * 100,
        lambda b: b[:12] + (99).to_bytes(4, "little") + b[16:],  # another format
        lambda b: b + b"\0" * 8,  # trailing bytes
    ],
)
def test_a_damaged_cache_file_is_built_again(tmp_path: Path, damage: object) -> None:
    parse = Parses()
    bridge_cache.load(tmp_path / "c", DATA, parse)
    path = bridge_cache.path_for(tmp_path / "c", DATA)
    path.write_bytes(damage(path.read_bytes()))  # type: ignore[operator]
    again = bridge_cache.load(tmp_path / "c", DATA, parse)
    assert parse.calls == 2
    assert answers(again) == answers(parse())
    assert bridge_cache.read(path) is not None  # written again, whole


def test_a_new_dictionary_file_replaces_the_old_cache(tmp_path: Path) -> None:
    bridge_cache.load(tmp_path / "c", DATA, Parses())
    (tmp_path / "c" / "other.txt").write_text("kept")
    bridge_cache.load(tmp_path / "c", DATA + b"# a newer release\n", Parses())
    names = sorted(p.name for p in (tmp_path / "c").iterdir())
    assert names == sorted([bridge_cache.path_for(tmp_path / "c", DATA + b"# a newer release\n").name,
                            "other.txt"])  # fmt: skip


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_an_unwritable_cache_folder_leaves_the_parsed_dictionary(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    folder.mkdir()
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        parse = Parses()
        d = bridge_cache.load(folder, DATA, parse)
        assert parse.calls == 1 and answers(d) == answers(parse())
        assert list(folder.iterdir()) == []
    finally:
        folder.chmod(stat.S_IRWXU)


def test_a_cache_path_that_is_a_folder_is_not_fatal(tmp_path: Path) -> None:
    bridge_cache.path_for(tmp_path / "c", DATA).mkdir(parents=True)
    parse = Parses()
    d = bridge_cache.load(tmp_path / "c", DATA, parse)
    assert parse.calls == 1 and answers(d) == answers(parse())


# The real dictionary's bridges, in a fresh interpreter (`Dictionary.load` keeps one per
# process): `Dictionary.load(folder)` from the cache in `folder` (argv[1]; "" parses here).
# Then its origin, a bridge and the process's peak memory in MB (VmHWM: getrusage's ru_maxrss
# keeps the peak of the image before exec, here the test worker's own, 338 MB on a loaded CI
# worker), read after that bridge as before.
REAL = (
    "import sys, re, json; from pathlib import Path; from memd.semantic.bridge import *;"
    "d = Dictionary.load(Path(sys.argv[1]) if sys.argv[1] else None);"
    "sister = to_english('我姐姐在哪个城市工作', d).terms;"
    "hwm = re.search(r'VmHWM:\\s+(\\d+)', Path('/proc/self/status').read_text());"
    "qs = ['我姐姐在哪个城市工作', '陶艺课是什么时候', '跑步'];"
    "es = ['when are we going to Kyoto', 'database migration test', 'my sister is a nurse'];"
    "print(json.dumps([to_english(q, d).terms for q in qs] + [to_chinese(q, d).terms for q in es]"
    " + [type(d.packed_parts()[1]).__name__]));"
    "print(d.origin, '|', sister, int(hwm[1]) // 1024)"
)


def _real(folder: str) -> tuple[str, str]:
    """(the bridges' JSON line, the origin line) of `REAL` run on `folder`."""
    out = subprocess.run([sys.executable, "-c", REAL, folder], capture_output=True, text=True,
                         check=True).stdout  # fmt: skip
    bridges, origin = out.splitlines()
    return bridges, origin


@pytest.fixture(scope="module")
def written_apart(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """A cache folder with no cache file in it, loaded once by `REAL` (its child process parses
    the dictionary and writes the file: ~2.5 CPU-s): the folder, the bridges, the origin line.
    The two tests below ask the same of that first load; each asserts its own part."""
    folder = tmp_path_factory.mktemp("written") / "c"
    return (folder, *_real(str(folder)))


@pytest.mark.skipif(not HAVE_DICTIONARY, reason="the semantic extra is not installed")
def test_the_real_dictionary_from_its_cache_answers_as_parsed(
    written_apart: tuple[Path, str, str],
) -> None:
    """The whole CC-CEDICT: a cache written by one process, read by another, gives the same
    bridges as parsing it (run in fresh interpreters: `Dictionary.load` keeps one per process)."""
    folder, written, _ = written_apart
    parsed, _ = _real("")
    mapped, _ = _real(str(folder))
    assert parsed.replace("bytearray", "x") == written.replace("memoryview", "x")
    assert written == mapped and "memoryview" in mapped


@pytest.mark.skipif(not HAVE_DICTIONARY, reason="the semantic extra is not installed")
def test_the_packaged_dictionary_is_parsed_in_a_child_process(
    written_apart: tuple[Path, str, str],
) -> None:
    """`Dictionary.load(folder)` with no cache file there has a child process parse and write
    it, and maps what the child wrote: the parse's memory is never the caller's."""
    folder, _, out = written_apart
    origin, _, rest = out.partition(" | ")
    assert origin == "parsed in a child process, its cache file written"
    assert "'sister'" in rest
    assert int(rest.split()[-1]) < 100, out  # MB at the peak: parsing here peaks at ~190
    assert len(list(folder.glob("cedict-*.bin"))) == 1


def test_building_apart_fails_cleanly_into_an_unusable_folder(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    assert not bridge_cache.build_apart(tmp_path / "file" / "c")


@pytest.mark.skipif(not HAVE_DICTIONARY, reason="the semantic extra is not installed")
def test_the_child_parses_nothing_when_its_folder_cannot_be_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`python -m memd.semantic.bridge_cache FOLDER` makes FOLDER before it parses (~2 s of CPU
    for the whole CC-CEDICT): into a folder that cannot be made it fails without parsing, and
    its caller parses the dictionary once, not twice."""
    from memd.semantic import bridge

    parsed: list[int] = []

    def lines(data: bytes) -> list[str]:
        parsed.append(1)
        return CEDICT.splitlines()

    monkeypatch.setattr(bridge, "_lines", lines)
    (tmp_path / "file").write_text("not a folder")
    assert bridge_cache.main([str(tmp_path / "file" / "c")]) == 1
    assert parsed == []
    assert bridge_cache.main([str(tmp_path / "c")]) == 0  # where it can: parsed and written
    assert parsed == [1] and len(list((tmp_path / "c").glob("cedict-*.bin"))) == 1
