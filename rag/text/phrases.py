"""Words, noun phrases and entity-like candidates of biomedical text, without a tagger.

No part-of-speech model is packaged, so phrases are found from the tokens alone:

* ``words`` splits a text into word tokens with their character spans. A token keeps inner
  hyphens, slashes, apostrophes, ``*``, ``+`` and periods or colons between characters
  (``S-adenosyl-L-methionine``, ``HLA-B*15:02``, ``miR-133a``, ``3.5``).
* ``chunks`` cuts a sentence into maximal runs of tokens that can belong to one noun phrase:
  a run ends at punctuation between tokens and at a closed-class or verb-like word
  (``FUNCTION_WORDS``, ``VERBS``, adverbs in *-ly*).
* ``phrases`` gives every sub-span of a chunk (up to ``MAX_WORDS`` words) that may stand alone
  as a name: it does not start with a modifier that only grades or counts (``LEADING``: "novel",
  "several", "increased" ...) or a participle, does not end with a word that names no thing
  (``GENERIC``: "patients", "study", "levels" ...), and is not only generic words and numbers.

``stem`` is the Porter stemmer the literature index uses (Whoosh's), so question and snippet
words are compared the way the index compares them. Pure; the word lists are our own.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from whoosh.lang.porter import stem as _porter

MAX_WORDS = 6
_WORD = re.compile(r"[^\W_](?:(?:[\w'\u2019*+/.:\u2013-]|,(?=\d{3}\b))*[\w+*\u2032])?%?")
# characters that may sit between two words of one phrase (anything else cuts it)
_JOINERS = frozenset(" \t\n-'\u2019")

FUNCTION_WORDS = frozenset(
    """
    a about above across after against all along also although among amongst an and another
    any are around as at be because been before behind being below beneath beside besides
    between beyond both but by can cannot could did do does doing done down due during each
    either else especially even ever every for from further had has have having he her here
    hers herself him himself his how however i if in into is it its itself just least less
    many may me might more moreover most much must my neither no nor not now of off often on
    once one only onto or other others otherwise our ours ourselves out over own per rather
    same several shall she should since so some such than that the their theirs them
    themselves then there thereby therefore these they this those though through throughout
    thus to together too toward towards under unless until up upon us via was we were what
    whatever when whenever where whereas wherever whether which while who whom whose why will
    with within without would yet you your despite except unlike regarding concerning versus
    vs according compared
    """.split()  # noqa: SIM905 (a word list reads better as text)
)
VERBS = frozenset(
    """
    act acts acted affect affects affected allow allows allowed appear appears appeared
    become becomes became belong belongs cause causes caused contain contains contained
    contribute contributes contributed define defined demonstrate demonstrates demonstrated
    depend depends describe describes described determine determines determined develop
    develops developed display displays displayed enhance enhances enhanced exhibit exhibits
    exhibited exist exists existed express expresses find finds found follow follows followed
    form forms formed give gives given had help helps helped identify identifies identified
    implicate implicated improve improves improved include includes included including increase
    increases indicate indicates indicated induce induces induced inhibit inhibits inhibited
    involve involves involved is known lead leads led make makes made mediate mediates mediated
    need needs needed observe observes observed occur occurs occurred play plays played
    present presents presented prevent prevents prevented produce produces produced promote
    promotes promoted propose proposed provide provides provided receive receives received
    reduce reduces reduced regulate regulates regulated remain remains remained report reports
    reported represent represents represented require requires required result results seen
    resulted reveal reveals revealed seem seems seemed show shows showed shown suggest
    suggests suggested support supports supported take takes taken target targets targeted
    tend tends tended treat treats treated undergo underwent use uses used using was were
    accumulate accumulates accumulated assess assesses assessed calculate calculates
    calculated combine combines combined compare compares compared decide decides decided
    defines differentiate differentiates eliminate eliminates eliminated elucidate elucidates
    elucidated estimate estimates estimated evaluate evaluates evaluated examine examines
    examined explore explores explored facilitate facilitates facilitated generate generates
    generated illustrate illustrates illustrated incorporate incorporates incorporated
    integrate integrates integrated investigate investigates investigated participate
    participates participated terminate terminates terminated tolerate tolerates tolerated
    validate validates validated
    """.split()  # noqa: SIM905
)
# Words that grade, count or qualify: they may sit inside a name but never start one.
LEADING = frozenset(
    """
    additional available certain common commonly considerable current different distinct
    effective elevated entire essential first following frequent further general given
    greater higher highest important increased initial latter likely lower lowest main major
    many more most new normal novel numerous other overall particular possible potent
    potential present prior recent reduced related relevant respective second several
    significant similar some specific standard strong such third total typical unique
    various well whole mild moderate severe progressive recurrent occult concomitant
    """.split()  # noqa: SIM905
)
# Words that name no particular thing: a candidate never ends with one nor consists of them.
GENERIC = frozenset(
    """
    ability absence activity addition age amount analysis analyses approach approaches area
    aspect association associations basis case cases cause causes change changes
    characteristic characteristics combination component components concentration
    concentrations context control data decrease degree development difference differences
    dose doses effect effects efficacy evaluation event events evidence example expression
    feature features field finding findings frequency function functions half importance
    incidence increase individuals information involvement kind level levels manner measure
    measures mechanism mechanisms member members method methods mode number numbers
    observation observations occurrence order outcome outcomes part participants pattern
    patterns patient patients people percent period persons phase point population
    populations presence process processes profile properties property proportion rate
    rates ratio reduction region regions relationship report reports response responses
    result results review risk role roles sample samples set severity side site sites
    situation size source stage status step strategy studies study subject subjects subset
    term terms time times use value values variety way ways work year years
    background objective objectives aim aims purpose introduction conclusion conclusions
    discussion design setting methods materials summary
    dna rna mrna mrnas mirna mirnas cdna pcr rt-pcr qpcr kda cpg utr utrs sirna snp snps
    vitro vivo control controls mice mouse rats rat human humans men women children adults
    """.split()  # noqa: SIM905
)
# Class nouns: they end names ("Graves' disease", "antithyroid drugs") but are none alone.
CLASS_NOUNS = frozenset(
    """
    agent agents cancer cancers class classes condition conditions disease diseases disorder
    disorders drug drugs factor factors form forms group groups model models pathway pathways
    product products series system systems therapy therapies tool tools treatment treatments
    trial trials type types
    """.split()  # noqa: SIM905
)
_NOUNS_IN_LY = frozenset(["family", "anomaly", "assembly", "supply", "italy", "butterfly", "fly"])
_NUMBER_WORDS = frozenset(
    """
    zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen
    fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy
    eighty ninety hundred thousand million
    """.split()  # noqa: SIM905
)


@dataclass(frozen=True, slots=True)
class Word:
    """A word token: its text and character span (end exclusive) in the text it came from."""

    text: str
    begin: int
    end: int

    @property
    def lower(self) -> str:
        """Return the lowercased text."""
        return self.text.lower()


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Return the index's stem of a lowercased word (Porter, as Whoosh analyses).

    >>> [stem(w) for w in ("deiodinases", "inherited", "viruses")]
    ['deiodinas', 'inherit', 'virus']
    """
    found: str = _porter(word)  # type: ignore[no-untyped-call]  # whoosh is untyped
    return found


@lru_cache(maxsize=8192)
def words(text: str) -> tuple[Word, ...]:
    """Return the word tokens of ``text`` with their spans (cached: answering reads a snippet
    several times).

    >>> [w.text for w in words("S-adenosyl-L-methionine (SAM), HLA-B*15:02 and 3.5 nm, 1,204, 7%.")]
    ['S-adenosyl-L-methionine', 'SAM', 'HLA-B*15:02', 'and', '3.5', 'nm', '1,204', '7%']
    """
    return tuple(Word(m.group(0), m.start(), m.end()) for m in _WORD.finditer(text))


def is_number(token: str) -> bool:
    """Return whether a token is a number (digits, or a number word).

    >>> is_number("3.5"), is_number("seven"), is_number("p53")
    (True, True, False)
    """
    lower = token.lower()
    if all(part in _NUMBER_WORDS for part in lower.split("-")):
        return True
    return bool(re.fullmatch(r"[\d.,:%/\u2013-]+", lower))


def breaks_phrase(token: str) -> bool:
    """Return whether a word cannot be inside a noun phrase (closed-class, verb, adverb).

    >>> breaks_phrase("is"), breaks_phrase("rapidly"), breaks_phrase("family"), breaks_phrase("p53")
    (True, True, False, False)
    """
    lower = token.lower()
    if lower in FUNCTION_WORDS or lower in VERBS:
        return True
    return lower.endswith("ly") and len(lower) > 4 and lower not in _NOUNS_IN_LY


def chunks(text: str) -> list[list[Word]]:
    """Return the maximal runs of words of ``text`` that may form noun phrases.

    >>> [" ".join(w.text for w in c) for c in chunks(
    ...     "Bortezomib, a proteasome inhibitor, is used in relapsed multiple myeloma (MM).")]
    ['Bortezomib', 'proteasome inhibitor', 'relapsed multiple myeloma', 'MM']
    """
    found: list[list[Word]] = []
    current: list[Word] = []
    previous_end = -1
    for word in words(text):
        joined = previous_end >= 0 and all(c in _JOINERS for c in text[previous_end : word.begin])
        if current and not joined:
            found.append(current)
            current = []
        previous_end = word.end
        if breaks_phrase(word.text):
            if current:
                found.append(current)
            current = []
            continue
        current.append(word)
    if current:
        found.append(current)
    return found


def _participle(lower: str) -> bool:
    return len(lower) > 4 and (lower.endswith("ed") or lower.endswith("ing"))


def can_start(word: Word) -> bool:
    """Return whether a phrase may start with ``word`` (not a grading word or a participle)."""
    lower = word.lower
    return lower not in LEADING and not _participle(lower)


def can_end(word: Word) -> bool:
    """Return whether a phrase may end with ``word`` (no generic noun, grading word, participle)."""
    lower = word.lower
    return lower not in GENERIC and lower not in LEADING and not _participle(lower)


def phrases(chunk: list[Word], max_words: int = MAX_WORDS) -> Iterator[tuple[int, int]]:
    """Yield the ``(first, last + 1)`` word ranges of ``chunk`` that may stand alone as names.

    >>> c = chunks("several novel BRCA1 mutations in patients")[0]
    >>> [" ".join(w.text for w in c[a:b]) for a, b in phrases(c)]
    ['BRCA1', 'BRCA1 mutations', 'mutations']
    """
    for first in range(len(chunk)):
        if not can_start(chunk[first]):
            continue
        for last in range(first, min(len(chunk), first + max_words)):
            if not can_end(chunk[last]):
                continue
            if all(w.lower in GENERIC or w.lower in CLASS_NOUNS for w in chunk[first : last + 1]):
                continue
            yield first, last + 1


def abbreviations(text: str) -> dict[str, str]:
    """Return the abbreviations defined in ``text`` ("long form (SHORT)") by lowercased short form.

    The long form is the end of the words before the parenthesis whose initials spell the short
    form; failing that, the shortest end whose letters spell it in order, the first letter
    starting a word (Schwartz and Hearst's rule).

    >>> abbreviations("Patients with multiple myeloma (MM) and Rett syndrome (RTT) were seen.")
    {'mm': 'multiple myeloma', 'rtt': 'Rett syndrome'}
    """
    found: dict[str, str] = {}
    tokens = words(text)
    for index, word in enumerate(tokens):
        if index == 0 or text[word.begin - 1 : word.begin] != "(":
            continue
        if text[word.end : word.end + 1] != ")" or not 2 <= len(word.text) <= 10:
            continue
        if not any(c.isupper() for c in word.text):
            continue
        before = tokens[max(0, index - len(word.text) - 4) : index]
        long_form = _long_form(word.text, before, text)
        if long_form:
            found.setdefault(word.lower, long_form)
    return found


def _long_form(short: str, before: Sequence[Word], text: str) -> str | None:
    letters = [c.lower() for c in short if c.isalnum()]
    for start in range(len(before) - 1, -1, -1):
        # first choice: the words' initials (hyphenated parts count) spell the short form
        parts = re.split(r"[\s\-/]+", text[before[start].begin : before[-1].end].lower())
        if [p[0] for p in parts if p] == letters:
            return text[before[start].begin : before[-1].end]
    for start in range(len(before) - 1, -1, -1):
        candidate = text[before[start].begin : before[-1].end]
        if "(" in candidate or ")" in candidate:
            return None
        if _spells(letters, candidate.lower()):
            return candidate
    return None


def _spells(letters: list[str], long_form: str) -> bool:
    """Whether ``letters`` occur in ``long_form`` in order, the first one starting a word."""
    position = len(long_form)
    for index in range(len(letters) - 1, -1, -1):
        position = long_form.rfind(letters[index], 0, position)
        if position < 0:
            return False
        if index == 0 and position > 0 and long_form[position - 1].isalnum():
            # the first letter must start a word: look further left
            while position > 0 and long_form[position - 1].isalnum():
                position = long_form.rfind(letters[0], 0, position)
                if position < 0:
                    return False
    return True
