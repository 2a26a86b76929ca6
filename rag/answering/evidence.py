"""Does the evidence answer the question? What a question is about, and whether the text says it.

A question names what it is about (its **anchors**: "cystic fibrosis" in "Which gene is mutated
in cystic fibrosis?", "BRCA1" and "tumour suppressor gene" in "Is BRCA1 a tumour suppressor
gene?") and what it asks for (its **focus**: "gene"). The anchors are the noun phrases of the
question (``rag.text.phrases.chunks``) without the focus phrase after the wh-word (unless it is
the only phrase: "What is apoptosis?"), reduced to their specific words: words that grade,
count or name no particular thing ("role", "patients", "gene", "treatment", …) and participles
("mutated") are not required. A phrase with no specific word left is no anchor.

An anchor is **mentioned** by a sentence when its words occur there, matched by stem after
spelling is made uniform (British and American spellings, ``-ise``/``-ize``, hyphenated words
also by their parts): all of them for anchors of one or two words, all but one for longer ones.

The evidence **answers** the question (``judge``) when one document mentions every anchor, in
any of its sentences (the document addresses the question's subject) and:

* yes/no: one sentence mentions every anchor (the text states the relation asked about);
* factoid and list: one sentence mentions every anchor (the answer is taken from such
  sentences: ``on_topic``);
* summary: the document is enough.

Otherwise the run abstains and says what was searched and what was found ("none of the 50
documents mentions COVID-19").

**Meaning.** Words are matched, not meaning: an abstract about something else can mention every
anchor, and an abstract that answers in other words ("preterm infants" for "premature babies")
mentions none. With the sentence model installed (``rag.meaning_check``, the packaged MiniLM),
the caller also gives ``judge`` the **closeness** of the question to the closest of the first
``READ_SENTENCES`` sentences read (the cosine of their embeddings): an answer the words allow
still needs ``CLOSE_ENOUGH``; a sentence at ``CLOSE_ALONE`` or closer answers although the
words differ. Both were chosen on the tune sets and measured on the held-out years
(docs/rag-answering.md). The rules have no threshold but the share of an anchor's words;
they were chosen on BioASQ 2013 and the 2019-2020 (7b, 8b) questions against indexes that do and
do not hold their documents, and are measured on held-out years (``bench/rag.py``,
docs/rag-answering.md). Pure.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from rag.text.claims import is_entity_token
from rag.text.phrases import (
    CLASS_NOUNS,
    FUNCTION_WORDS,
    GENERIC,
    LEADING,
    Word,
    chunks,
    stem,
    words,
)
from rag.text.sentences import sentence_spans

# Words that never make an anchor on their own: question words, broad class nouns and words
# that say what is asked rather than what about.
_ASKING = frozenset(
    """
    which what who whom where when why how name list describe explain
    gene genes protein proteins enzyme enzymes receptor receptors molecule molecules
    mutation mutations variant variants cell cells tissue tissues organ organs
    syndrome syndromes symptom symptoms sign signs complication complications
    virus viruses bacteria bacterium organism organisms species compound compounds
    damage damages injury injuries toxicity toxicities lesion lesions abnormality
    abnormalities problem problems disease diseases condition conditions
    common used main major known approved available current commonly usually
    """.split()  # noqa: SIM905 (a word list reads better as text)
)
_NOT_SPECIFIC = GENERIC | CLASS_NOUNS | LEADING | _ASKING
_AUXILIARY = frozenset(
    [
        "is",
        "are",
        "was",
        "were",
        "do",
        "does",
        "did",
        "can",
        "could",
        "has",
        "have",
        "had",
        "be",
        "been",
    ]
)
# closeness (cosine, packaged MiniLM) the closest sentence read must reach besides the word rules,
# and the closeness at which it answers in place of them; how many sentences are read for it
CLOSE_ENOUGH = 0.5
CLOSE_ALONE = 0.7
READ_SENTENCES = 40

_WH = frozenset(["which", "what", "who", "whom", "where", "when", "how", "name", "list"])
# British spellings and -ise forms, written the American way before stemming
_SPELLINGS = (
    (re.compile(r"our(?=s?$|ed$|ing$|al$)"), "or"),  # tumour, behaviour, colour
    (re.compile(r"(?<=.)ae(?=m|s|d)"), "e"),  # anaemia, haemorrhage, paediatric
    (re.compile(r"^oe(?=s|d|st)"), "e"),  # oesophagus, oedema, oestrogen
    (re.compile(r"(?<=..)is(?=e$|ed$|es$|ing$|ation$|ations$)"), "iz"),  # randomised
    (re.compile(r"(?<=.)tre$"), "ter"),  # centre, litre
)


@lru_cache(maxsize=65536)
def key(word: str) -> str:
    """Return the comparable form of a lowercased word: spelling made uniform, then stemmed.

    >>> key("tumour") == key("tumors"), key("haemorrhage") == key("hemorrhage")
    (True, True)
    >>> key("randomised") == key("randomized"), key("oesophageal") == key("esophageal")
    (True, True)
    """
    for pattern, replacement in _SPELLINGS:
        word = pattern.sub(replacement, word)
    return stem(word)


def keys(text: str) -> frozenset[str]:
    """Return the comparable forms of a text's words, hyphenated words also by their parts.

    >>> sorted(keys("Amiodarone-induced lung toxicity"))
    ['amiodaron', 'amiodarone-induc', 'induc', 'lung', 'toxic']
    """
    found: set[str] = set()
    for word in words(text):
        lower = word.lower
        found.add(key(lower))
        if "-" in lower or "/" in lower:
            found.update(key(part) for part in re.split(r"[-/]", lower) if len(part) > 1)
    return frozenset(found)


def content_keys(text: str) -> frozenset[str]:
    """Return the comparable forms of a text's content words (no function, question or
    auxiliary words, nothing generic).

    >>> sorted(content_keys("Thrombocytopenia is the antidote for heparin."))
    ['antidot', 'heparin', 'thrombocytopenia']
    """
    return frozenset(key(w.lower) for w in words(text) if _content(w.lower))


@dataclass(frozen=True, slots=True)
class Anchor:
    """A phrase the question is about: its words as written and their comparable forms."""

    text: str
    keys: frozenset[str]
    weight: int = 1
    # another name given for it in brackets ("thyrotropin (TSH)")
    other: frozenset[str] = frozenset()
    # a lone qualifying word ("best", "clinical", "somatic"): it narrows, it names nothing
    soft: bool = False

    # words a mention must have whatever else it lacks: names and symbols ("VPS4A"), and the
    # longest word ("ubrogepant" in "ubrogepant entered clinical phase III")
    core: frozenset[str] = frozenset()

    def mentioned_by(self, found: frozenset[str]) -> bool:
        """Return whether a sentence with the comparable forms ``found`` mentions the anchor:
        all of its words for one or two; for longer ones its core and at least half of them."""
        if self.other and self.other <= found:
            return True
        present = len(self.keys & found)
        if present == len(self.keys):
            return True
        return len(self.keys) >= 3 and 2 * present >= len(self.keys) and self.core <= found


@dataclass(frozen=True, slots=True)
class Topic:
    """What a question is about (``anchors``) and what it asks for (``focus``, as written)."""

    anchors: tuple[Anchor, ...]
    focus: str = ""
    # what the question asks besides its anchors: the focus and relation words' forms
    asks: frozenset[str] = frozenset()
    # the focus noun's form when it names a particular kind ("pseudogenes", "king"; not
    # "gene", "drug"): the documents must speak of it
    head: str = ""

    @property
    def required(self) -> tuple[Anchor, ...]:
        """The anchors the evidence must mention: all but the soft ones (when any is not)."""
        hard = tuple(a for a in self.anchors if not a.soft)
        return hard or self.anchors

    @property
    def spare(self) -> int:
        """How many required anchors may go unmentioned: one of three or more, else none."""
        return 1 if len(self.required) >= 3 else 0

    def named(self) -> str:
        """Return the anchors as a reader would say them: "BRCA1 and tumour suppressor gene"."""
        names = [a.text for a in self.required]
        if len(names) <= 1:
            return "".join(names)
        return ", ".join(names[:-1]) + " and " + names[-1]


def _specific(word: str) -> bool:
    lower = word.lower()
    if lower in _NOT_SPECIFIC or len(lower) < 2:
        return False
    if "-" in lower and not lower.startswith("-"):
        # "amiodarone-induced": specific when one of its parts is
        return any(_specific(part) for part in word.split("-") if part)
    participle = len(lower) > 4 and lower.endswith(("ed", "ing")) and word.islower()
    return not participle


def topic(question: str) -> Topic:
    """Read what a question is about.

    >>> about = topic("Which gene is mutated in cystic fibrosis?")
    >>> [(a.text, sorted(a.keys), a.weight) for a in about.anchors], about.focus, sorted(about.asks)
    ([('cystic fibrosis', ['cystic', 'fibrosi'], 2)], 'gene', ['gene', 'mutat'])
    >>> [a.text for a in topic("Is BRCA1 a tumour suppressor gene?").anchors]
    ['BRCA1', 'tumour suppressor']
    >>> [a.text for a in topic("What lung damage can amiodarone cause?").anchors]
    ['lung', 'amiodarone']
    >>> [a.text for a in topic("What is apoptosis?").anchors]
    ['apoptosis']
    >>> about = topic("Which tissues have thyrotropin (TSH) receptors?")
    >>> [(a.text, sorted(a.other)) for a in about.anchors]
    [('thyrotropin', ['tsh'])]
    """
    found = [w for w in words(question)]
    wh_at = _focus_start(found)
    phrases: list[tuple[list[str], bool]] = []  # (words, in brackets)
    focus_index: int | None = None
    for chunk in chunks(question):
        texts = [w.text for w in chunk]
        while texts and texts[0].lower() in _WH:
            texts = texts[1:]
        if not texts:
            continue
        if wh_at is not None and focus_index is None and chunk[0].begin >= wh_at:
            focus_index = len(phrases) if chunk[0].begin == wh_at else -1
        bracketed = question[: chunk[0].begin].rstrip().endswith("(")
        phrases.append((texts, bracketed))
    if len(phrases) <= 1:
        focus_index = None
    anchors: list[Anchor] = []
    focus = ""
    for index, (texts, bracketed) in enumerate(phrases):
        if index == focus_index:
            focus = " ".join(texts)
            # the focus's modifiers narrow the answer ("Lisp framework", "lung damage"): they
            # are about the subject too; its head ("framework", "damage") is what is asked for
            texts = texts[:-1]
        specific = [t for t in texts if _specific(t)]
        if not specific:
            continue
        anchor_keys = frozenset(k for t in specific for k in _specific_keys(t))
        anchor_keys = anchor_keys or keys(specific[0])
        if bracketed and anchors:
            # "thyrotropin (TSH)": another name of the anchor before it
            last = anchors[-1]
            anchors[-1] = replace(last, other=last.other | anchor_keys)
            continue
        trimmed = _trimmed(texts)
        core = frozenset(k for t in specific if is_entity_token(t) for k in _specific_keys(t)) | {
            max(sorted(anchor_keys), key=len)
        }
        anchors.append(
            Anchor(
                " ".join(trimmed),
                anchor_keys,
                _weight(specific),
                soft=_is_soft(trimmed),
                core=core & anchor_keys,
            )
        )
    if not anchors:
        # nothing specific: the question's longest content word stands for what it is about
        content = [w.text for w in found if _content(w.lower)]
        if content:
            longest = max(content, key=len)
            anchors.append(Anchor(longest, keys(longest), 1))
    named = {k for a in anchors for k in a.keys | a.other}
    asks = frozenset(key(w.lower) for w in found if _content(w.lower) and key(w.lower) not in named)
    head_words = [w.text for w in words(focus)][-1:]
    head = key(head_words[0].lower()) if head_words and _specific(head_words[0]) else ""
    return Topic(tuple(anchors), focus, asks, head)


# lone words that qualify rather than name: adjectives by their ending, and a few others
_QUALIFYING = re.compile(r"(al|ic|ive|ous|ent|ant|ary|able|ible|est|ar|ory|ful|less)$")
_WEAK = frozenset(
    """
    best top good poor two three four five many software execution prognosis average
    sequence sequences evaluate reliability candidates
    """.split()  # noqa: SIM905
)


def _is_soft(texts: Sequence[str]) -> bool:
    """A one-word anchor in lower case that qualifies ("clinical", "best") is soft."""
    if len(texts) != 1 or not texts[0].islower() or "-" in texts[0]:
        return False
    word = texts[0]
    return word in _WEAK or _QUALIFYING.search(word) is not None


def _specific_keys(word: str) -> frozenset[str]:
    """The comparable forms of a word's specific parts ("amiodarone-induced": amiodarone)."""
    if "-" in word.strip("-"):
        return frozenset(key(p.lower()) for p in word.split("-") if p and _specific(p))
    return frozenset({key(word.lower())})


# words between a focus-introducing wh-word and its focus ("which of the", "what is the")
_BEFORE_FOCUS = frozenset(["is", "are", "was", "were", "the", "a", "an", "of", "kind", "type"])
_FOCUS_WH = frozenset(["which", "what", "name", "list"])


def _focus_start(found: Sequence[Word]) -> int | None:
    """Return where the focus phrase starts: the word after "which"/"what"/"name"/"list" (past
    "is the", "kind of" …) or after "how many"/"how much"; None when the question has no focus
    ("Who …", "What does X do …", yes/no questions)."""
    lowers = [w.lower for w in found]
    for at, word in enumerate(lowers[:4]):
        nxt = at + 1
        if word == "how" and nxt < len(lowers) and lowers[nxt] in ("many", "much"):
            nxt += 1
        elif word not in _FOCUS_WH:
            if word in _WH:
                return None
            continue
        while nxt < len(lowers) and lowers[nxt] in _BEFORE_FOCUS:
            nxt += 1
        if nxt < len(lowers) and lowers[nxt] not in _AUXILIARY and lowers[nxt] not in _WH:
            return found[nxt].begin
        return None
    return None


def _content(lower: str) -> bool:
    return (
        len(lower) > 2
        and lower not in FUNCTION_WORDS
        and lower not in _WH
        and lower not in _AUXILIARY
        and lower not in GENERIC
    )


def _weight(specific: Sequence[str]) -> int:
    """How telling an anchor is: 3 for a name or symbol, 2 for a long word, else 1."""
    if any(is_entity_token(t) for t in specific):
        return 3
    return 2 if any(len(t) >= 8 for t in specific) else 1


def _trimmed(texts: list[str]) -> list[str]:
    """The phrase without its unspecific words at either end ("tumour suppressor gene" keeps
    its inner words; "the gene" gives "gene")."""
    start, end = 0, len(texts)
    while start < end - 1 and not _specific(texts[start]):
        start += 1
    while end > start + 1 and not _specific(texts[end - 1]):
        end -= 1
    return texts[start:end]


def sentences(text: str) -> list[str]:
    """Return the sentences of a text (title and abstract are separate texts)."""
    return [text[b:e] for b, e in sentence_spans(text)] or ([text] if text.strip() else [])


@dataclass(frozen=True, slots=True)
class Verdict:
    """Whether the evidence answers the question, and in plain words why not."""

    answered: bool
    reason: str = ""
    # anchors no document mentions
    missing: tuple[str, ...] = ()
    # the closeness in meaning of the closest sentence read (None: not measured)
    closeness: float | None = None
    # answered because a sentence is close in meaning although the words differ
    by_meaning: bool = False


def judge(
    question: str,
    kind: str,
    documents: Sequence[tuple[str, str]],
    *,
    closeness: float | None = None,
) -> Verdict:
    """Decide whether ``documents`` ((id, text) pairs: the articles the answer would rest on)
    answer ``question`` of type ``kind`` (see the module docstring); ``closeness`` is the
    question's cosine with the closest of ``read_sentences(documents)`` when a sentence model
    measured it.

    >>> docs = [("1", "Hepatitis B virus causes liver cirrhosis.")]
    >>> judge("Which virus causes COVID-19?", "factoid", docs).reason
    'no abstract read mentions COVID-19'
    >>> judge("Which virus causes liver cirrhosis?", "factoid", docs).answered
    True
    >>> judge("Which virus causes liver cirrhosis?", "factoid", docs, closeness=0.31).reason[-39:]
    'in meaning (closest 0.310, needed 0.50)'
    >>> judge("Which virus causes COVID-19?", "factoid", docs, closeness=0.74).by_meaning
    True
    """
    by_words = _by_words(question, kind, documents)
    if closeness is None or not documents:
        return by_words
    measured = replace(by_words, closeness=closeness)
    if by_words.answered and closeness < CLOSE_ENOUGH:
        return Verdict(
            False,
            f"the abstracts read mention {topic(question).named()}, but no sentence is close to "
            f"the question in meaning (closest {closeness:.3f}, needed {CLOSE_ENOUGH:.2f})",
            closeness=closeness,
        )
    if not by_words.answered and closeness >= CLOSE_ALONE:
        return Verdict(True, closeness=closeness, by_meaning=True)
    return measured


def read_sentences(documents: Sequence[tuple[str, str]], limit: int = READ_SENTENCES) -> list[str]:
    """Return the sentences whose closeness to the question ``judge`` weighs: the first
    ``limit`` sentences of four words or more, document by document in the order given.

    >>> read_sentences([("1", "Short one. Hepatitis B virus causes cirrhosis.")])
    ['Hepatitis B virus causes cirrhosis.']
    """
    found: list[str] = []
    for _, text in documents:
        for sentence in sentences(text):
            if len(sentence.split()) >= 4:
                found.append(sentence)
                if len(found) == limit:
                    return found
    return found


def _by_words(question: str, kind: str, documents: Sequence[tuple[str, str]]) -> Verdict:
    """The word rules of ``judge`` (the module docstring)."""
    about = topic(question)
    if not documents:
        return Verdict(False, "no abstract was found")
    if not about.anchors:
        return Verdict(True)
    required = about.required
    per_document = [_document_sentences(text) for _, text in documents]
    mentioned = [
        {a for a in required if any(a.mentioned_by(s) for s in sents)} for sents in per_document
    ]
    missing = tuple(a.text for a in required if not any(a in m for m in mentioned))
    if len(missing) > about.spare:
        return Verdict(False, f"no abstract read mentions {_joined(missing)}", missing)
    covering = [
        sents
        for sents, m in zip(per_document, mentioned, strict=True)
        if len(m) >= len(required) - about.spare
    ]
    if not covering:
        return Verdict(False, f"no abstract read mentions both {about.named()}")
    if about.head and not any(
        about.head in s and together(about, s) for sents in covering for s in pairs(sents)
    ):
        what = about.focus.split()[-1]
        return Verdict(False, f"no sentence read mentions {about.named()} together with {what}")
    if kind == "yesno" and not any(together(about, s) for sents in covering for s in pairs(sents)):
        return Verdict(
            False,
            f"the abstracts read mention {about.named()}, but no sentence states how they relate",
        )
    return Verdict(True)


def focus_modifiers(question: str) -> frozenset[str]:
    """Return the comparable forms of the focus phrase's modifiers ("lung" in "What lung
    damage …"): an answer that carries them is of the kind asked for."""
    about = topic(question)
    parts = [w.text for w in words(about.focus)][:-1]
    return frozenset(key(p.lower()) for p in parts if _specific(p))


def pairs(sentences: Sequence[frozenset[str]]) -> list[frozenset[str]]:
    """Each sentence with the one after it: a relation is often stated across two ("Anthracycline
    cardiotoxicity led to cardiomyopathy. Dexrazoxane reduced the risk.")."""
    if len(sentences) <= 1:
        return list(sentences)
    return [a | b for a, b in itertools.pairwise(sentences)]


def together(about: Topic, found: frozenset[str]) -> bool:
    """Return whether one sentence (its comparable forms) mentions the required anchors (all
    but one of three or more)."""
    required = about.required
    return sum(a.mentioned_by(found) for a in required) >= len(required) - about.spare


def on_topic(question: str, texts: Iterable[str]) -> list[bool]:
    """Return, per text, whether one of its sentences mentions every anchor of the question."""
    about = topic(question)
    return [
        not about.anchors or any(together(about, s) for s in _document_sentences(text))
        for text in texts
    ]


def mentions_any(question: str, text: str) -> bool:
    """Return whether ``text`` mentions one of the question's anchors (True without anchors)."""
    about = topic(question)
    found = keys(text)
    return not about.anchors or any(_touches(a, found) for a in about.anchors)


def _touches(anchor: Anchor, found: frozenset[str]) -> bool:
    """An anchor is touched when its rarest-looking (longest) word is there."""
    return max(anchor.keys, key=len) in found or anchor.mentioned_by(found)


@lru_cache(maxsize=4096)
def _document_sentences(text: str) -> tuple[frozenset[str], ...]:
    return tuple(keys(s) for s in sentences(text))


def _joined(names: Sequence[str]) -> str:
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " or " + names[-1]
