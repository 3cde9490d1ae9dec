"""Place names: is a word after "在"/"in" a place (a city, a region, a country) or something else?

Countries and their regions (provinces, states) come from pycountry, in English and in their
Chinese names, read the first time a place is looked up. Cities are not in pycountry: the
large Chinese cities and the foreign cities people name in Chinese are listed here, and the
world's cities of 15,000 people or more are in `data/cities.txt.gz` (GeoNames' data, CC BY 4.0,
a compact list of names made by `scripts/make_cities.py`; see `data/README.md`).
"""

from __future__ import annotations

import functools
import re
import unicodedata

_ZH_CITIES = frozenset(
    "北京 上海 广州 深圳 杭州 成都 南京 武汉 西安 苏州 天津 重庆 长沙 厦门 青岛 大连 宁波 合肥 郑州 "
    "济南 福州 昆明 沈阳 哈尔滨 长春 石家庄 太原 南昌 南宁 贵阳 兰州 乌鲁木齐 珠海 东莞 佛山 无锡 "
    "常州 南通 徐州 温州 绍兴 嘉兴 金华 台州 泉州 烟台 潍坊 洛阳 惠州 中山 汕头 海口 三亚 拉萨 呼和浩特 "
    "银川 西宁 香港 澳门 台北 高雄 台中 新加坡 东京 大阪 京都 首尔 釜山 伦敦 巴黎 柏林 慕尼黑 阿姆斯特丹 "
    "纽约 旧金山 洛杉矶 西雅图 波士顿 芝加哥 奥斯汀 硅谷 湾区 多伦多 温哥华 蒙特利尔 悉尼 墨尔本 "
    "奥克兰 迪拜 曼谷 吉隆坡 国外 海外 老家".split()
)
_ZH_SUFFIX_RE = re.compile(r"(?:特别行政区|维吾尔自治区|壮族自治区|回族自治区|自治区|省|市)$")
_ZH_PLACE_SUFFIX_RE = re.compile(r"[市省县区州镇村]$")
CJK_NAME_RE = re.compile(r"[\u3400-\u9fff]+")
_EN_SUFFIX_RE = re.compile(r"\s+(?:Sheng|Shi|Zizhiqu|SAR|Province|State)$")


@functools.cache
def _names() -> frozenset[str]:
    import gettext

    import pycountry

    def zh(domain: str) -> gettext.NullTranslations:
        try:
            return gettext.translation(domain, pycountry.LOCALES_DIR, languages=["zh_CN"])
        except OSError:
            return gettext.NullTranslations()

    countries, regions = zh("iso3166-1"), zh("iso3166-2")
    out: set[str] = set()
    for c in pycountry.countries:
        for name in (c.name, getattr(c, "common_name", ""), countries.gettext(c.name)):
            if name:
                out.add(name.casefold())
    for s in pycountry.subdivisions:
        for name in (s.name, regions.gettext(s.name)):
            out.add(_EN_SUFFIX_RE.sub("", _ZH_SUFFIX_RE.sub("", name)).casefold())
            out.add(name.casefold())
    return frozenset(out)


def _fold(name: str) -> str:
    """`name` casefolded without its accents ("Kraków" → "krakow")."""
    plain = unicodedata.normalize("NFKD", name)
    return "".join(c for c in plain if not unicodedata.combining(c)).casefold()


@functools.cache
def _cities() -> frozenset[str]:
    """The names of the world's cities of 15,000 people or more: `data/cities.txt.gz`, made from
    GeoNames' data (CC BY 4.0) by `scripts/make_cities.py` — their own names (of 50,000 or more)
    and the names in Chinese script of China's, and of the others that have one of three
    characters or more (a two-character name abroad is too often a word)."""
    import gzip
    from importlib.resources import files

    data = (files("memd.extraction.rules") / "data" / "cities.txt.gz").read_bytes()
    return frozenset(gzip.decompress(data).decode().split("\n")) - {""}


def is_city(text: str) -> bool:
    """Whether `text` is the name of a city of the gazetteer ("Lisbon", "Kraków", "大理")."""
    text = text.strip()
    if CJK_NAME_RE.fullmatch(text):
        return text in _cities()
    return text[:1].isupper() and (text.casefold() in _cities() or _fold(text) in _cities())


def is_place(text: str, *, cities: bool = True) -> bool:
    """Whether `text` names a country, region or city ("上海", "四川省", "Germany", "Texas",
    "Lisbon"); `cities=False`: only countries, regions and the large cities listed here."""
    text = text.strip()
    if not text:
        return False
    if text in _ZH_CITIES or _ZH_PLACE_SUFFIX_RE.search(text):
        return True
    return text.casefold() in _names() or cities and is_city(text)
