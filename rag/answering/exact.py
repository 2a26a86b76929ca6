"""BioASQ question types and exact answers (yes/no, factoid, list) from snippets or a model.

``question_type`` guesses the BioASQ type of a free question from its wording (a BioASQ
question brings its own type). The extractive exact answers are deterministic: yes/no weighs
the snippets' evidence for and against the question's claim (``rag.answering.yesno``);
factoid and list answers are noun-phrase candidates ranked by evidence and fit to the asked
type (``rag.answering.entities``). A model's JSON reply is parsed defensively; ``None`` means
it was unusable. ``stated_in_frame`` keeps the names a stated answer may put into the
question's frame: a template asserts a relation whatever name it holds, so only names a
snippet states in that relation. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag.answering.entities import factoid_answer, list_answer
from rag.answering.evidence import (
    content_keys,
    focus_modifiers,
    key,
    keys,
    pairs,
    sentences,
    together,
    topic,
)
from rag.answering.ideal import question_frame
from rag.answering.snippets import Snippet
from rag.answering.yesno import NoReader, decide, has_form
from rag.text.causes import REMEDY_WORDS, cause_roles, names_as_remedy

QUESTION_TYPES = ("yesno", "factoid", "list", "summary")
MAX_ENTITIES = 5
_YESNO_START = frozenset(
    [
        "is",
        "are",
        "does",
        "do",
        "did",
        "can",
        "could",
        "should",
        "was",
        "were",
        "has",
        "have",
        "had",
        "will",
        "would",
        "may",
        "might",
        "must",
    ]
)
_SUMMARY_START = re.compile(
    r"^(describe|explain|summari[sz]e|discuss|how does|how do|how is|how are|why\b|what is the "
    r"(role|function|mechanism|effect|purpose|impact|significance|relationship)|what are the "
    r"(roles|functions|mechanisms|effects))",
)
_LIST_START = re.compile(
    r"^(list|name (the|all)|enumerate|which|what)\b(\s+\S+){0,3}?\s+\S+s\s+(are|were|have|do|"
    r"can|is)\b|^(list|enumerate)\b|^name (the|all)\b"
)
_FACTOID_START = re.compile(r"^(what|which|who|whom|where|when|how many|how much|name)\b")


@dataclass(frozen=True, slots=True)
class ExactAnswer:
    """A BioASQ exact answer: ``yesno`` for yes/no questions, ``entities`` for factoid/list."""

    question_type: str
    yesno: str | None = None
    # each entity is a tuple of synonyms (the first is the name), best first
    entities: tuple[tuple[str, ...], ...] = ()

    @property
    def is_empty(self) -> bool:
        """Return whether there is nothing to report."""
        return self.yesno is None and not self.entities

    def values(self) -> tuple[str, ...]:
        """Return the answer as plain strings ("yes"/"no", or the entity names)."""
        if self.yesno is not None:
            return (self.yesno,)
        return tuple(e[0] for e in self.entities)

    def reading(self) -> str:
        """Return how to read the values: ranked guesses, not all of them answers.

        BioASQ scores up to five factoid candidates by their rank, so the exact answer keeps
        five; a reader must not take the second to fifth for answers too. A list's entities
        are the likeliest prefix of the same ranking, and most of them are no answer by BioASQ's
        matching (mean list precision 0.36 on the held-out years 9b-11b, docs/rag-answering.md),
        so they are not called answers either.

        >>> ExactAnswer("factoid", entities=(("lung toxicity",), ("lung mass",))).reading()
        'candidates ranked by the evidence, likeliest first; not all of them are answers'
        >>> ExactAnswer("factoid", entities=(("CFTR",),)).reading()
        'the one candidate the evidence gives'
        >>> ExactAnswer("list", entities=(("propofol",), ("clozapine",))).reading()
        'candidates ranked by the evidence, likeliest first; not all of them are answers'
        """
        if self.yesno is not None or not self.entities:
            return ""
        if len(self.entities) == 1:
            return "the one candidate the evidence gives"
        return "candidates ranked by the evidence, likeliest first; not all of them are answers"


def question_type(question: str) -> str:
    """Guess the BioASQ type of a question from its wording.

    >>> [question_type(q) for q in ("Is aspirin safe?", "Which genes are mutated in FH?",
    ...  "What is the gene mutated in cystic fibrosis?", "What is the role of p53 in cancer?")]
    ['yesno', 'list', 'factoid', 'summary']
    """
    text = " ".join(question.lower().split())
    first = text.split(" ", 1)[0] if text else ""
    if first in _YESNO_START:
        return "yesno"
    if _SUMMARY_START.match(text):
        return "summary"
    if _LIST_START.match(text):
        return "list"
    if _FACTOID_START.match(text):
        return "factoid"
    return "summary"


def extractive_exact(
    question: str, kind: str, snippets: Sequence[Snippet], reader: NoReader | None = None
) -> ExactAnswer:
    """Return the extractive exact answer for a question of type ``kind``.

    Yes/no: the evidence of the snippets for and against the question's claim, and the yes/no
    reader model when one is given (``rag.answering.yesno.decide``). Factoid: the five best
    entity candidates; list: the entities of the best-scoring prefix of the ranking
    (``rag.answering.entities``).
    """
    if kind == "yesno":
        return ExactAnswer(kind, yesno=decide(question, [s.text for s in snippets], reader))
    if kind not in ("factoid", "list"):
        return ExactAnswer(kind)
    texts = [(s.pmid, s.text) for s in snippets]
    names = factoid_answer(question, texts) if kind == "factoid" else list_answer(question, texts)
    if keys(question) & _REMEDY:
        # "What is the treatment for NMS?": a drug the snippets only name as its cause is none
        names = [n for n in names if not _named_as_cause(n, question, snippets)]
    # "What lung damage …": names that carry the focus's modifiers are of the kind asked for
    wanted = focus_modifiers(question)
    if wanted:
        names = sorted(names, key=lambda n: not wanted & keys(n))
    return ExactAnswer(kind, entities=tuple((n,) for n in names))


# the comparable forms of words asking what treats, reverses or prevents something
_REMEDY = frozenset(key(w) for w in REMEDY_WORDS)


def _named_as_cause(name: str, question: str, snippets: Sequence[Snippet]) -> bool:
    """Whether the snippet sentences that name ``name`` together with the question's subject
    name it as a cause at least as often as not ("neuroleptic malignant syndrome induced by
    risperidone"; ``rag.text.causes``)."""
    about = topic(question)
    roles = [
        role
        for snippet in snippets
        for sentence in sentences(snippet.text)
        if together(about, keys(sentence))
        for role in cause_roles(sentence, name)
    ]
    return 2 * sum(roles) >= len(roles) > 0


def parse_exact(kind: str, value: object) -> ExactAnswer | None:
    """Read a model's decoded JSON reply as an exact answer (``None`` when unusable).

    >>> parse_exact("yesno", {"answer": "Yes."})
    ExactAnswer(question_type='yesno', yesno='yes', entities=())
    >>> parse_exact("list", {"answer": ["LDLR", ["APOB", "apoB"], 7]}).entities
    (('LDLR',), ('APOB', 'apoB'))
    """
    answer = value.get("answer") if isinstance(value, dict) else value
    if kind == "yesno":
        if isinstance(answer, list) and len(answer) == 1:
            answer = answer[0]
        word = answer.strip().lower().rstrip(".!") if isinstance(answer, str) else ""
        return ExactAnswer(kind, yesno=word) if word in ("yes", "no") else None
    if isinstance(answer, str):
        answer = [answer]
    if not isinstance(answer, list):
        return None
    entities = []
    for item in answer:
        names = [item] if isinstance(item, str) else item if isinstance(item, list) else []
        clean = tuple(n.strip() for n in names if isinstance(n, str) and n.strip())
        if clean and len(clean[0]) <= 200:
            entities.append(clean)
    limit = MAX_ENTITIES if kind == "factoid" else 100
    return ExactAnswer(kind, entities=tuple(entities[:limit])) if entities else None


def stated_in_frame(question: str, exact: ExactAnswer, snippets: Sequence[Snippet]) -> ExactAnswer:
    """Return the exact answer with only the names a stated answer may put into the question's
    frame: those a snippet sentence (or two in a row) states with every content word of the
    frame but its qualifiers ("X is the antidote for heparin" needs X, antidote and heparin
    together; "X is mainly used for Y" needs X and Y). A factoid whose best name is not so
    stated gets no stated answer: a template must not put a name the evidence only mentions
    into a relation it never states.

    >>> from rag.answering.snippets import Snippet
    >>> def snip(text): return Snippet("d", text, "abstract", "abstract", 0, 1, "1", 1, 1.0, 1.0)
    >>> q = "What is the antidote for heparin?"
    >>> exact = ExactAnswer("factoid", entities=(("protamine",), ("thrombocytopenia",)))
    >>> stated_in_frame(q, exact, [snip("Protamine is the antidote for heparin.")]).values()
    ('protamine',)
    >>> stated_in_frame(q, exact, [snip("Heparin-induced thrombocytopenia was seen.")]).values()
    ()

    A remedy frame ("X is used to treat Y") is stated only where a sentence names the name as
    the remedy (``rag.text.causes.names_as_remedy``), not where the words merely meet:

    >>> q = "What drug is used to treat delirium?"
    >>> exact = ExactAnswer("factoid", entities=(("clozapine",),))
    >>> stated_in_frame(q, exact, [snip("Delirium was seen in clozapine-treated men.")]).values()
    ()
    >>> stated_in_frame(q, exact, [snip("Clozapine was used to treat delirium.")]).values()
    ('clozapine',)
    """
    frame = question_frame(question)
    if not exact.entities or not frame:
        return exact
    wanted = content_keys(frame) - _QUALIFIERS
    condition = {w for w in wanted if not any(has_form(frozenset([w]), r) for r in _REMEDY)}
    if condition and condition != wanted:  # a remedy frame: "X is used to treat Y"
        said = [sentence for snippet in snippets for sentence in sentences(snippet.text)]
        stated = [
            entity
            for entity in exact.entities
            if any(names_as_remedy(s, entity[0], condition, key) for s in said)
        ]
    else:
        spans = [
            span
            for snippet in snippets
            for span in pairs([keys(sentence) for sentence in sentences(snippet.text)])
        ]
        stated = [
            entity
            for entity in exact.entities
            if any(
                keys(entity[0]) <= span and all(has_form(span, w) for w in wanted) for span in spans
            )
        ]
    if exact.question_type == "factoid" and stated[:1] != list(exact.entities[:1]):
        stated = []
    return ExactAnswer(exact.question_type, entities=tuple(stated))


# words of a frame that grade or soften rather than state the relation ("is mainly used for",
# "is most strongly associated with"): a sentence stating the relation need not repeat them
_QUALIFIERS = frozenset(
    key(w)
    for w in """
    mainly most strongly commonly frequently usually often currently average main major
    primary known use used usual typical typically generally best first
    """.split()  # noqa: SIM905 (a word list reads better as text)
)
