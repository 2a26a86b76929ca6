"""BioASQ question types and exact answers (yes/no, factoid, list) from snippets or a model.

``question_type`` guesses the BioASQ type of a free question from its wording (a BioASQ
question brings its own type). The extractive exact answers are simple and deterministic:
yes/no says "no" only when most of the top three snippets carry a negation cue (BioASQ's yes/no
questions are mostly "yes"); factoid and list answers are the entity-like terms of the top
snippets (gene and protein symbols, capitalised names, terms with digits) that the question
does not already contain, ranked by the summed score of the snippets they occur in. A model's
JSON reply is parsed defensively; ``None`` means it was unusable. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag.answering.snippets import Snippet

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
_NEGATION = re.compile(
    r"\b(not|no|never|neither|nor|without|lack(s|ed|ing)?|fail(s|ed)? to|unable|absence of|"
    r"did not|does not|do not|cannot|unlikely|no evidence)\b",
    re.IGNORECASE,
)
_TOKEN = re.compile(r"[A-Za-z0-9][\w\-/+]*[\w+]|[A-Za-z0-9]")
_STOP = frozenset(
    """
    a about after against also although among an and are as associated at background based be
    because been before between both by case cases compared conclusion conclusions decreased
    during each for found from group groups here higher how however in including increased
    into is it its known less lower methods more most objective of on or other our over
    patient patients reduced results show showed shown significant significantly some studies
    study such suggest suggested suggests than that the their then there therefore these this
    those through thus to under used using very was we well were what when where whether which
    while who with within without
    """.split()  # noqa: SIM905 (a word list reads better as text)
)


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


def extractive_exact(question: str, kind: str, snippets: Sequence[Snippet]) -> ExactAnswer:
    """Return the extractive exact answer for a question of type ``kind``."""
    if kind == "yesno":
        top = snippets[:3]
        negated = sum(bool(_NEGATION.search(s.text)) for s in top)
        return ExactAnswer(kind, yesno="no" if top and negated * 2 > len(top) else "yes")
    if kind not in ("factoid", "list"):
        return ExactAnswer(kind)
    names = candidate_entities(question, snippets)[:MAX_ENTITIES]
    return ExactAnswer(kind, entities=tuple((n,) for n in names))


def _entity_like(token: str, sentence_start: bool) -> bool:
    if len(token) < 2 or token.lower() in _STOP:
        return False
    inner_upper = any(c.isupper() for c in token[1:])
    has_digit = any(c.isdigit() for c in token) and any(c.isalpha() for c in token)
    capitalised = token[0].isupper() and not sentence_start
    return inner_upper or has_digit or capitalised


def candidate_entities(question: str, snippets: Sequence[Snippet]) -> list[str]:
    """Return terms of the snippets that are not in the question, best first.

    Entity-like terms (symbols, capitalised names, terms with digits) count fully; other
    content words of five letters or more count a quarter, so they only fill up the list.

    >>> from rag.answering.snippets import Snippet
    >>> s = Snippet("d", "Mutations in LDLR and APOB cause hypercholesterolemia.", "abstract",
    ...             "abstract", 0, 53, "1", 1, 1.0, 1.0)
    >>> candidate_entities("Which genes cause familial hypercholesterolemia?", s and [s])
    ['LDLR', 'APOB', 'Mutations']
    """
    asked = {t.lower() for t in _TOKEN.findall(question)}
    score: dict[str, float] = {}
    first_seen: dict[str, int] = {}
    spelling: dict[str, str] = {}
    for snippet in snippets:
        for position, match in enumerate(_TOKEN.finditer(snippet.text)):
            token = match.group(0)
            key = token.lower()
            if key in asked or key in _STOP or len(token) < 2:
                continue
            if _entity_like(token, position == 0):
                weight = 1.0
            elif token.isalpha() and len(token) >= 5:
                weight = 0.25
            else:
                continue
            score[key] = score.get(key, 0.0) + weight * max(snippet.score, 1e-6)
            if key not in first_seen:
                first_seen[key] = len(first_seen)
                spelling[key] = token
    ranked = sorted(score, key=lambda k: (-score[k], first_seen[k]))
    return [spelling[k] for k in ranked]


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
