"""Factoid and list answers: entity candidates of the snippets ranked by evidence and type fit.

The question is read first (``asked``): its content stems, and the *focus*, the noun that names
what is asked for ("Which antiepileptic **drug** ...", "Tumors of which three **organs** ...",
"How many ..." asks for a number). Every noun phrase of the snippets (``rag.text.phrases``)
is a candidate; its score adds up

* **evidence**: for each sentence it occurs in, a base weight plus how much of the question the
  sentence covers (idf-weighted share of the question's content stems), with a bonus per
  further document (an answer that several articles state beats one repeated by one);
* **type fit**: the candidate looks like what the focus asks for (a gene symbol for "gene", a
  drug name for "drug", a Latin binomial for "species", a number for "how many" ...; the
  classes are in ``TYPES``) or stands next to the focus noun in a snippet ("the drug
  naloxone", "Rett syndrome");
* **form**: symbols, names with digits or inner capitals and multi-word terms are likelier
  entities than a lone lowercase word;

and loses what it repeats of the question (a candidate made only of question words is no
answer). A phrase inside a longer candidate that scores nearly as well gives way to it (the
longer one is the name). List answers keep the candidates whose score is near the best and
drop non-entities (lone generic or lowercase common words). Pure and deterministic.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from rag.text.phrases import (
    CLASS_NOUNS,
    FUNCTION_WORDS,
    GENERIC,
    VERBS,
    Word,
    abbreviations,
    chunks,
    is_number,
    phrases,
    stem,
    words,
)
from rag.text.sentences import sentence_spans

MAX_FACTOIDS = 5
MAX_LIST = 12


def _cls(*names: str) -> frozenset[str]:
    return frozenset(stem(n) for n in names)


_DRUG_SUFFIXES = (
    *("mab", "nib", "vir", "pril", "sartan", "statin", "cillin", "mycin", "cycline", "oxacin"),
    *("azole", "prazole", "tidine", "dipine", "olol", "triptan", "parin", "afil", "semide"),
    *("profen", "barbital", "azepam", "zepam", "setron", "lukast", "gliptin", "glitazone"),
    *("platin", "taxel", "rubicin", "trexate", "tinib", "ine", "ide", "one", "ol", "ate"),
)
_DISEASE_HEADS = _cls(
    *("syndrome", "disease", "disorder", "cancer", "carcinoma", "tumor", "tumour", "deficiency"),
    *("infection", "myopathy", "dystrophy", "sclerosis", "leukemia", "lymphoma", "failure"),
)
_DISEASE_SUFFIXES = ("itis", "oma", "emia", "aemia", "osis", "pathy", "plasia", "trophy", "algia")
_ORGANISM_HEADS = _cls("virus", "bacterium", "bacteria", "phage", "fungus", "yeast", "mouse")
_CELL_PARTS = _cls(
    *("nucleus", "nucleolus", "cytoplasm", "cytosol", "membrane", "mitochondria", "mitochondrion"),
    *("centrosome", "centriole", "cilium", "cilia", "golgi", "lysosome", "endosome", "ribosome"),
    *("reticulum", "peroxisome", "vesicle", "chromatin", "kinetochore", "spindle", "synapse"),
)
# nouns that only say what kind of thing a name is ("MSX2 gene")
_HEADS = _cls("gene", "genes", "protein", "proteins", "mrna", "family", "member")
_INHERITANCE = _cls("autosomal", "dominant", "recessive", "x-linked", "mitochondrial", "linked")


def _symbol(word: str) -> bool:
    """A gene/protein-like symbol: inner capitals or letters mixed with digits."""
    has_alpha = any(c.isalpha() for c in word)
    return has_alpha and (
        any(c.isupper() for c in word[1:]) or (any(c.isdigit() for c in word) and len(word) <= 12)
    )


def _drug(text: str) -> bool:
    last = text.split()[-1].lower()
    return len(last) > 5 and last.isalpha() and last.endswith(_DRUG_SUFFIXES)


def _disease(text: str) -> bool:
    last = text.split()[-1].lower()
    return stem(last) in _DISEASE_HEADS or (len(last) > 5 and last.endswith(_DISEASE_SUFFIXES))


def _organism(text: str) -> bool:
    parts = text.split()
    binomial = (
        len(parts) == 2
        and parts[0][:1].isupper()
        and parts[0][1:].islower()
        and parts[1].isalpha()
        and parts[1].islower()
    )
    return binomial or stem(parts[-1].lower()) in _ORGANISM_HEADS


def _number(text: str) -> bool:
    return is_number(text.split()[0])


def _cell_part(text: str) -> bool:
    return stem(text.split()[-1].lower()) in _CELL_PARTS


def _inheritance(text: str) -> bool:
    return any(stem(w.lower()) in _INHERITANCE for w in text.split())


def _named(text: str) -> bool:
    """A proper name of a tool, trial or instrument: capitals or digits beyond the first letter."""
    return any(_symbol(w) or (w[:1].isupper() and len(w) > 2) for w in text.split())


def shape(text: str) -> str:
    """Return the kind of name a candidate looks like (list answers tend to share one).

    >>> [shape(t) for t in ("TP53", "imatinib", "Rett syndrome", "Aspergillus niger", "7")]
    ['symbol', 'drug', 'disease', 'organism', 'number']
    """
    for kind, test in (
        ("number", _number),
        ("symbol", lambda t: any(_symbol(w) for w in t.split())),
        ("drug", _drug),
        ("disease", _disease),
        ("organism", _organism),
    ):
        if test(text):
            return kind
    if text[:1].isupper():
        return "capitalised"
    return "words" if " " in text else "word"


def _molecule(text: str) -> bool:
    return any(_symbol(w) for w in text.split()) or text.split()[-1].lower().endswith("ase")


# focus stems -> the test a candidate of that class passes
TYPES: tuple[tuple[frozenset[str], Callable[[str], bool]], ...] = (
    (
        _cls(
            *("gene", "protein", "enzyme", "receptor", "kinase", "antigen", "marker"),
            *("biomarker", "homolog", "isoform", "subunit", "mirna", "microrna", "transporter"),
            *("channel", "ligand", "molecule", "target", "mutation", "allele", "variant"),
            *("factor", "deiodinase", "methyltransferase", "gene", "oncogene", "histone"),
        ),
        _molecule,
    ),
    (
        _cls(
            *("drug", "medication", "medicine", "inhibitor", "antagonist", "agonist", "compound"),
            *("antibiotic", "antidote", "agent", "treatment", "therapy", "chemotherapy", "analog"),
            *("analogue", "antibody", "vaccine", "statin", "anticoagulant", "antidepressant"),
        ),
        _drug,
    ),
    (
        _cls(
            *("disease", "disorder", "syndrome", "cancer", "tumor", "tumour", "condition"),
            *("malignancy", "comorbidity", "co-morbidity", "complication", "symptom", "infection"),
            *("pathology", "diagnosis", "indication", "adenoma", "carcinoma", "lymphoma"),
        ),
        _disease,
    ),
    (
        _cls(
            *("species", "organism", "virus", "bacterium", "bacteria", "pathogen", "parasite"),
            *("vector", "host", "strain", "microorganism", "fungus", "genus", "genera"),
        ),
        _organism,
    ),
    (
        _cls(
            *("tool", "software", "program", "server", "database", "algorithm", "package"),
            *("trial", "method", "technique", "scale", "questionnaire", "score", "test"),
        ),
        _named,
    ),
    (_cls("inheritance", "inherited", "inherit"), _inheritance),
    (_cls("where", "localization", "location", "compartment", "organelle"), _cell_part),
)
_HOW_MANY = re.compile(r"\bhow (many|much|large|long|old|often)\b")
# focus nouns that ask for a quantity
_MEASURES = _cls(
    *("diameter", "size", "length", "weight", "mass", "percentage", "proportion", "prevalence"),
    *("incidence", "frequency", "number", "dose", "dosage", "concentration", "rate", "age"),
    *("duration", "half-life", "time", "temperature", "volume", "count", "ratio", "percent"),
)
_WH = frozenset(["which", "what", "who", "whom", "where", "name", "list"])
# words between a wh-word and its focus that are not the focus
_SKIP = frozenset(["is", "are", "was", "were", "the", "a", "an", "of", "kind", "type", "types"])


@dataclass(frozen=True, slots=True)
class Asked:
    """What a question asks: its content stems (with idf-like weights) and its focus."""

    stems: dict[str, float]
    focus: tuple[str, ...]  # the focus noun phrase's stems, head last ("" when none)
    number: bool = False
    checks: tuple[Callable[[str], bool], ...] = field(default=())
    # every stem the question uses, hyphenated words also by their parts
    covered: frozenset[str] = frozenset()
    # the question's content words in order (lowercase), for abbreviations of its phrases
    sequence: tuple[str, ...] = ()

    def abbreviates(self, token: str) -> bool:
        """Whether ``token`` abbreviates a run of question words ("TH": thyroid hormone).

        Its letters (after dropping a trailing question word such as "alpha1") must spell the
        run's initials in order, starting with the first word's and ending with the last's.
        """
        lower = token.lower()
        if token.endswith("s") and token[:-1].isupper():
            lower = lower[:-1]  # a plural abbreviation ("XFELs")
        for word in sorted(self.sequence, key=len, reverse=True):
            if lower.endswith(word) and len(lower) > len(word):
                lower = lower[: -len(word)]
                break
        letters = [c for c in lower if c.isalpha()]
        if not 2 <= len(letters) <= 6 or not any(c.isupper() for c in token):
            return False
        initials = [p[0] for w in self.sequence for p in re.split(r"[-/]", w) if p]
        for start in range(len(initials)):
            for end in range(start + 1, min(len(initials), start + 8)):
                run = initials[start : end + 1]
                if run[0] == letters[0] and run[-1] == letters[-1] and _subsequence(letters, run):
                    return True
        return False

    @property
    def head(self) -> str:
        """Return the stem of the focus noun (empty when the question names none)."""
        return self.focus[-1] if self.focus else ""


def asked(question: str, snippets_text: Sequence[str] = ()) -> Asked:
    """Read a question: content stems (weighted by rarity in the snippets) and focus.

    >>> a = asked("Which antiepileptic drug is most strongly associated with spina bifida?")
    >>> a.head, sorted(a.stems)
    ('drug', ['antiepilept', 'associat', 'bifida', 'drug', 'spina', 'strongli'])
    >>> asked("Tumors of which three organs are associated with MEN1?").head
    'organ'
    >>> asked("How many genes does the human hoxD cluster contain?").number
    True
    """
    tokens = [w.lower for w in words(question)]
    content = [t for t in tokens if t not in FUNCTION_WORDS and t not in _WH and len(t) > 1]
    documents = [{stem(w.lower) for w in words(t)} for t in snippets_text]
    weights: dict[str, float] = {}
    for token in content:
        key = stem(token)
        found = sum(key in d for d in documents)
        weights[key] = math.log(1.0 + (len(documents) + 1) / (found + 0.5))
    focus = _focus(tokens)
    number = bool(_HOW_MANY.search(" ".join(tokens))) or bool(focus and focus[-1] in _MEASURES)
    checks = tuple(test for stems, test in TYPES if focus and focus[-1] in stems)
    if "where" in tokens[:2]:
        checks += (_cell_part,)
    covered = set(weights).union(*(_parts(k) for k in weights)) if weights else set()
    sequence = tuple(content)
    return Asked(weights, focus, number, checks, frozenset(covered), sequence)


def _subsequence(letters: list[str], run: list[str]) -> bool:
    position = 0
    for letter in letters:
        while position < len(run) and run[position] != letter:
            position += 1
        if position == len(run):
            return False
        position += 1
    return True


def _focus(tokens: list[str]) -> tuple[str, ...]:
    """Return the stems of the noun phrase after the first wh-word (head last)."""
    for index, token in enumerate(tokens):
        if token not in _WH:
            continue
        rest = tokens[index + 1 :]
        while rest and (rest[0] in _SKIP or is_number(rest[0])):
            rest = rest[1:]
        phrase: list[str] = []
        for token2 in rest:
            if token2 in FUNCTION_WORDS or token2 in VERBS:
                break
            phrase.append(stem(token2))
        if phrase:
            return tuple(phrase[-3:])
    return ()


@dataclass(slots=True)
class _Candidate:
    stems: tuple[str, ...]
    surfaces: dict[str, int] = field(default_factory=dict)
    evidence: float = 0.0
    best_relevance: float = 0.0
    documents: set[str] = field(default_factory=set)
    sentences: set[tuple[int, int]] = field(default_factory=set)
    beside_focus: bool = False
    coordinated: int = 0  # occurrences in an enumeration ("A, B and C")
    partners: set[tuple[str, ...]] = field(default_factory=set)  # what it is enumerated with
    capitalised: int = 0  # occurrences starting with a capital, not at the sentence start
    whole: int = 0  # occurrences as a whole noun phrase

    @property
    def text(self) -> str:
        return max(self.surfaces, key=lambda t: (self.surfaces[t], -len(t)))


@dataclass(frozen=True, slots=True)
class Ranked:
    """A ranked candidate: its surface form, score and how many documents state it."""

    text: str
    score: float
    documents: int


@dataclass(frozen=True, slots=True)
class Weights:
    """The weights of the candidate model: ``P(answer) = 1 / (1 + exp(-(bias + sum w * x)))``.

    One weight per feature of ``features`` (see there), fitted by logistic regression on the
    candidates of the BioASQ 2013 questions of batches 0-2 (test batch 3 held out; the fit and
    the numbers are in docs/rag-answering.md). ``nested`` is no feature: the share of a nested
    candidate's probability a longer one needs to replace it.
    """

    evidence: float = 0.0
    documents: float = 0.0
    relevance: float = 0.0
    type_fit: float = 0.0
    beside_focus: float = 0.0
    symbol: float = 0.0
    multiword: float = 0.0
    long: float = 0.0
    lowercase_single: float = 0.0
    asked: float = 0.0
    coordinated: float = 0.0
    partners: float = 0.0
    capitalised: float = 0.0
    whole: float = 0.0
    entity: float = 0.0
    number: float = 0.0
    not_number: float = 0.0
    share: float = 0.0
    sibling: float = 0.0
    bias: float = 0.0
    nested: float = 0.8


FEATURES = tuple(f for f in Weights.__dataclass_fields__ if f not in ("nested", "bias"))
BASE = 0.3  # a sentence's evidence before its relevance to the question is added

FACTOID_WEIGHTS = Weights(
    *(0.04, 0.48, 0.52, 1.79, 0.69, -0.11, 0.23, -1.38, -0.11, -0.02, -0.87, 0.06, -0.06),
    *(0.44, -0.22, 1.96, -1.01, 3.06, 0.0),
    bias=-6.9,
)
# list answers: a first ranking without ``sibling``, then the final one with it
LIST_FIRST_WEIGHTS = Weights(
    *(1.23, -0.74, -1.67, 1.69, 0.76, 0.29, -1.79, -0.84, -1.49, -0.19, -0.92, 0.89, -0.44),
    *(1.0, 1.39, 0.0, 0.0, 1.31, 0.0),
    bias=-4.34,
)
LIST_WEIGHTS = Weights(
    *(1.19, -0.69, -1.6, 1.12, 0.76, -0.96, -1.78, -0.8, -1.65, -0.17, -0.69, 0.78, -0.42),
    *(0.92, 1.24, 0.0, 0.0, 1.07, 2.17),
    bias=-4.33,
)
# the expected number of list items is this many times the summed probabilities (fitted too)
LIST_EXPECTED = 3.0


def factoid_answer(question: str, texts: Sequence[tuple[str, str]]) -> list[str]:
    """Return up to five candidates for a factoid question, best first."""
    ranked = rank_candidates(question, texts, weights=FACTOID_WEIGHTS, first_pass=FACTOID_WEIGHTS)
    return [r.text for r in ranked[:MAX_FACTOIDS]]


def list_answer(question: str, texts: Sequence[tuple[str, str]]) -> list[str]:
    """Return the entities of a list answer: the prefix of the ranking with the best expected F1.

    With ``p`` the candidates' probabilities (entities only), taking the best ``k`` is
    expected to find ``sum(p[:k])`` true items among ``k`` against about
    ``LIST_EXPECTED * sum(p)`` expected ones; the ``k`` (1 to ``MAX_LIST``) with the best
    ``2 * found / (k + expected)`` is taken.

    >>> list_answer("Which drugs inhibit COMT?", [("1", "COMT inhibitors include entacapone "
    ...     "and tolcapone."), ("2", "Tolcapone and entacapone inhibit COMT.")])
    ['entacapone', 'Tolcapone']
    """
    ranked = rank_candidates(question, texts, weights=LIST_WEIGHTS, first_pass=LIST_FIRST_WEIGHTS)
    entities = [r for r in ranked if is_entity(r.text)]
    expected = LIST_EXPECTED * sum(r.score for r in entities)
    best_k, best, found = 0, -1.0, 0.0
    for k, candidate in enumerate(entities[:MAX_LIST], start=1):
        found += candidate.score
        value = 2.0 * found / (k + expected)
        if value > best:
            best_k, best = k, value
    return [r.text for r in entities[:best_k]]


def rank_candidates(
    question: str,
    texts: Sequence[tuple[str, str]],
    *,
    weights: Weights = FACTOID_WEIGHTS,
    first_pass: Weights = FACTOID_WEIGHTS,
) -> list[Ranked]:
    """Rank the noun-phrase candidates of ``texts`` ((document id, text) pairs) as answers.

    >>> ranked = rank_candidates("Which drug is an antidote in opioid overdose?", [
    ...     ("1", "Naloxone is the antidote of choice in opioid overdose."),
    ...     ("2", "In opioid overdose, the drug naloxone reverses respiratory depression.")])
    >>> ranked[0].text, ranked[0].documents
    ('Naloxone', 2)
    """
    question_info = asked(question, [t for _, t in texts])
    found = _collect(_sentences(texts), question_info)
    _merge_aliases(found, texts, question_info)
    values = candidate_features(found, question_info, first_pass)
    scored = {key: _probability(v, weights) for key, v in values.items()}
    scored = _prefer_longer(scored, weights.nested, _HEADS)
    order = sorted(scored, key=lambda k: (-scored[k], len(k), k))
    return [
        Ranked(_surface(found[k], question_info), round(scored[k], 6), len(found[k].documents))
        for k in order
    ]


def candidate_features(
    found: dict[tuple[str, ...], _Candidate], question: Asked, weights: Weights
) -> dict[tuple[str, ...], dict[str, float]]:
    """Return every candidate's features, ``sibling`` included (it needs a first ranking).

    ``sibling`` is the share of the ten likeliest candidates (by the score without it) that
    have the candidate's ``shape``: the items of a list answer tend to be names of one kind.
    """
    best = max((c.evidence for c in found.values()), default=1.0)
    values = {key: features(c, question) | {"share": c.evidence / best} for key, c in found.items()}
    first = sorted(values, key=lambda k: -_probability(values[k], weights))[:10]
    mass: dict[str, float] = {}
    for key in first:
        kind = shape(found[key].text)
        mass[kind] = mass.get(kind, 0.0) + _probability(values[key], weights)
    total = sum(mass.values()) or 1.0
    for key, value in values.items():
        value["sibling"] = mass.get(shape(found[key].text), 0.0) / total
    return values


def _collect(
    sentences: list[tuple[str, str]], question: Asked
) -> dict[tuple[str, ...], _Candidate]:
    """Gather every candidate phrase with its evidence, keyed by its stems."""
    found: dict[tuple[str, ...], _Candidate] = {}
    allowed = set(question.focus)
    for sentence_id, (document, sentence) in enumerate(sentences):
        relevance = _relevance(sentence, question)
        parts = chunks(sentence)
        listed = _coordinated(sentence, parts)
        for position, chunk in enumerate(parts):
            stems = [stem(w.lower) for w in chunk]
            for first, last in phrases(chunk):
                key = tuple(stems[first:last])
                if _asked_edge(key, question, allowed) or (
                    last - first == 1
                    and (len(chunk[first].text) < 2 or question.abbreviates(chunk[first].text))
                ):
                    continue
                candidate = found.get(key)
                if candidate is None:
                    candidate = found[key] = _Candidate(key)
                text = sentence[chunk[first].begin : chunk[last - 1].end]
                candidate.surfaces[text] = candidate.surfaces.get(text, 0) + 1
                if (sentence_id, first) in candidate.sentences:
                    continue
                candidate.sentences.add((sentence_id, first))
                candidate.evidence += BASE + relevance
                candidate.best_relevance = max(candidate.best_relevance, relevance)
                candidate.documents.add(document)
                candidate.beside_focus |= _beside(chunk, first, last, question)
                whole = first == 0 and last == len(chunk)
                candidate.whole += whole
                candidate.capitalised += chunk[first].text[0].isupper() and chunk[first].begin > 0
                if whole and position in listed:
                    candidate.coordinated += 1
                    candidate.partners.update(
                        tuple(stem(w.lower) for w in parts[other]) for other in listed[position]
                    )
    return found


def _coordinated(sentence: str, parts: list[list[Word]]) -> dict[int, set[int]]:
    """Chunks enumerated together ("A, B and C"): each position with the others of its run."""
    runs: list[list[int]] = []
    for index in range(len(parts) - 1):
        between = sentence[parts[index][-1].end : parts[index + 1][0].begin]
        if re.fullmatch(r"\s*,?\s*(?:(?:and|or|and/or|as well as)\s+)?", between):
            if runs and runs[-1][-1] == index:
                runs[-1].append(index + 1)
            else:
                runs.append([index, index + 1])
    return {i: set(run) - {i} for run in runs for i in run}


def _parts(stemmed: str) -> set[str]:
    """The stems of a hyphenated word's parts ("stiff-man" -> stiff, man)."""
    pieces = [p for p in re.split(r"[-/]", stemmed) if p]
    return {stem(p) for p in pieces} if len(pieces) > 1 else {stemmed}


def _asked_edge(key: tuple[str, ...], question: Asked, allowed: set[str]) -> bool:
    """Whether the phrase is only question words, or starts or ends with one (focus aside)."""
    asked_stems = question.covered
    if set().union(*(_parts(k) for k in key)) <= asked_stems:
        return True
    return any(_parts(k) <= asked_stems and not _parts(k) <= allowed for k in (key[0], key[-1]))


def _merge_aliases(
    found: dict[tuple[str, ...], _Candidate], texts: Sequence[tuple[str, str]], question: Asked
) -> None:
    """Fold abbreviations into their long forms; drop those that abbreviate question words."""
    aliases: dict[str, str] = {}
    for _, text in texts:
        for short, long_form in abbreviations(text).items():
            aliases.setdefault(short, long_form)
    for short, long_form in aliases.items():
        short_key = (stem(short),)
        long_key = tuple(stem(w.lower) for w in words(long_form))
        candidate = found.pop(short_key, None)
        if candidate is None or set(long_key) <= question.covered:
            continue
        target = found.get(long_key)
        if target is None:
            found[short_key] = candidate  # the long form is no candidate: keep the short one
            continue
        target.evidence += candidate.evidence
        target.documents |= candidate.documents
        target.beside_focus |= candidate.beside_focus
        target.coordinated += candidate.coordinated
        target.partners |= candidate.partners
        target.capitalised += candidate.capitalised
        target.whole += candidate.whole
        target.best_relevance = max(target.best_relevance, candidate.best_relevance)
        for text in candidate.surfaces:
            target.surfaces.setdefault(text, 0)


def _surface(candidate: _Candidate, question: Asked) -> str:
    """The form to show: the most frequent spelling, a singular one when one was seen."""
    forms = sorted(candidate.surfaces, key=lambda t: (-candidate.surfaces[t], len(t), t))
    singular = [f for f in forms if not f.lower().endswith("s")]
    text = singular[0] if singular else forms[0]
    if question.number and text.split()[0].lower() in _DIGITS:
        first, *rest = text.split()
        text = " ".join([_DIGITS[first.lower()], *rest])
    return text


_DIGITS = {
    w: str(n)
    for n, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve".split()  # noqa: SIM905
    )
}


def _sentences(texts: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    return [
        (document, text[begin:end])
        for document, text in texts
        for begin, end in sentence_spans(text)
    ]


def _relevance(sentence: str, question: Asked) -> float:
    total = sum(question.stems.values())
    if not total:
        return 0.0
    present = {stem(w.lower) for w in words(sentence)}
    return sum(v for k, v in question.stems.items() if k in present) / total


def _beside(chunk: list[Word], first: int, last: int, question: Asked) -> bool:
    """Whether the focus noun stands right before or after the span in its chunk."""
    if not question.head:
        return False
    before = stem(chunk[first - 1].lower) if first > 0 else ""
    after = stem(chunk[last].lower) if last < len(chunk) else ""
    inside = stem(chunk[last - 1].lower)
    return question.head in (before, after) or (inside == question.head and last - first > 1)


def features(candidate: _Candidate, question: Asked) -> dict[str, float]:
    """Return the features of a candidate (the names of ``FEATURES``)."""
    text = candidate.text
    tokens = text.split()
    fit = any(check(text) for check in question.checks)
    numeric = _number(text)
    occurrences = max(1, len(candidate.sentences))
    repeated = [s for s in candidate.stems if s in question.covered and s not in question.focus]
    return {
        "evidence": math.log(candidate.evidence),
        "documents": math.log(len(candidate.documents)),
        "relevance": candidate.best_relevance,
        "type_fit": float(fit),
        "beside_focus": float(candidate.beside_focus),
        "symbol": float(any(_symbol(t) for t in tokens)),
        "multiword": float(len(tokens) > 1),
        "long": float(len(tokens) > 2),
        "lowercase_single": float(len(tokens) == 1 and text.islower()),
        "asked": len(repeated) / len(candidate.stems),
        "coordinated": candidate.coordinated / occurrences,
        "partners": math.log1p(len(candidate.partners)),
        "capitalised": candidate.capitalised / occurrences,
        "whole": candidate.whole / occurrences,
        "entity": float(is_entity(text)),
        "number": float(question.number and numeric),
        "not_number": float(question.number and not numeric),
    }


def _probability(values: dict[str, float], weights: Weights) -> float:
    """The candidate's probability of being an answer under the logistic model."""
    linear = weights.bias + sum(getattr(weights, name) * values.get(name, 0.0) for name in FEATURES)
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, linear))))


def _prefer_longer(
    scored: dict[tuple[str, ...], float], share: float, heads: frozenset[str]
) -> dict[tuple[str, ...], float]:
    """Between a candidate and a longer one containing it, keep one.

    The longer one wins when it scores at least ``share`` of the shorter, unless what it adds
    is only class nouns or the question's focus ("MSX2 gene" for "Which genes ...": MSX2).
    """
    keys = sorted(scored, key=len, reverse=True)
    # every candidate's longer candidates containing it, longest first (as ``keys`` orders them)
    containers: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
    for longer in keys:
        size = len(longer)
        for part in {longer[i:j] for i in range(size) for j in range(i + 1, size + 1)}:
            if len(part) < size:
                containers.setdefault(part, []).append(longer)
    kept = dict(scored)
    for key in keys:
        for longer in containers.get(key, ()):
            if longer not in kept or key not in kept:
                continue
            if set(longer) - set(key) <= heads:
                kept[key] = max(kept[key], kept.pop(longer))
            elif kept[longer] >= share * kept[key]:
                kept.pop(key)
                break
    return kept


def is_entity(text: str) -> bool:
    """Return whether a candidate can be listed as an entity (not a lone generic word, nor a
    lone adjective such as "Fatal" or "spinal").

    >>> [is_entity(t) for t in ("flecainide", "probability", "interaction", "CYP2D6")]
    [True, False, False, True]
    >>> [is_entity(t) for t in ("Fatal", "spinal", "phenobarbital", "spinal anaesthesia")]
    [False, False, True, True]
    """
    tokens = text.split()
    if len(tokens) > 1 or _symbol(text) or _drug(text) or _disease(text):
        return True
    lower = text.lower()
    return (
        lower not in GENERIC
        and lower not in CLASS_NOUNS
        and not lower.endswith(_ABSTRACT_SUFFIXES)
        and not lower.endswith(_ADJECTIVE_SUFFIXES)
        and not is_number(text)
    )


_ABSTRACT_SUFFIXES = ("ity", "tion", "sion", "ment", "ness", "ance", "ence", "ism", "ing")
# a lone word with one of these endings describes rather than names (chosen on BioASQ 7b-8b:
# list F1 0.370 -> 0.377 there, 0.354 -> 0.360 on 9b-11b; factoid MRR unchanged)
_ADJECTIVE_SUFFIXES = ("al", "ous", "ive", "ic", "ful", "less", "ble", "ary", "ory")
