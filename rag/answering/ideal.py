"""Ideal answers without a model: the answer first, then the sentences that address the question.

* **The answer first** (``statement``): "Yes, <the question's claim>." or "No, <the claim
  negated>." (``declarative``: "Does aspirin reduce X?" -> "Yes, aspirin does reduce X."); for
  factoid and list questions the names, put into the question's own frame when it has one
  ("What is the methyl donor of X?" with SAM: "SAM is the methyl donor of X.").
* **Sentences that address the question** (``select``): every sentence of the snippets, its
  structured-abstract label dropped ("RESULTS: ...") and its parenthesised statistics and
  citations removed ("(p < 0.01)", "[4]"), scored by its relevance to the question (BM25 over
  the sentences) and by how much of it other articles also say (shared words and word pairs
  with sentences of other documents: what several articles agree on is what an answer says).
  Sentences are taken greedily, each penalised for repeating a chosen one and for coming
  from an article already used, until the type's word budget is spent. With a sentence model
  (``meaning``: the packaged MiniLM, ``rag.meaning_check``), relevance is mostly closeness in
  meaning: ``MEANING`` of it is the sentence's cosine with the question, the rest BM25 (chosen
  on BioASQ 7b-8b, measured on 9b-11b: docs/rag-answering.md).

The weights and budgets were chosen on BioASQ 2013 batches 0-2 (ROUGE-2 against the ideal
answers) and checked on batch 3 (docs/rag-answering.md). Pure.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag.answering.snippets import SimilarityScorer, Snippet, bm25_scores
from rag.text.phrases import FUNCTION_WORDS, breaks_phrase, stem, words
from rag.text.sentences import sentence_spans

# words of ideal-answer sentences after the stated answer, per question type
BUDGETS = {"yesno": 15, "factoid": 10, "list": 90, "summary": 80}
RELEVANCE = 0.7  # the share of relevance (against agreement) in a sentence's score
REDUNDANCY = 0.3  # the weight of the overlap with sentences already chosen
SAME_ARTICLE = 0.3  # the penalty per sentence already taken from the same article
MEANING = 0.85  # with a sentence model: the share of closeness in meaning in relevance

LABELS = frozenset(
    """
    background backgrounds objective objectives aim aims purpose purposes introduction
    methods method materials design setting settings participants patients results result
    findings conclusion conclusions discussion interpretation context importance summary
    significance measurements outcome outcomes main interventions intervention
    """.split()  # noqa: SIM905 (a word list reads better as text)
)
_AUXILIARIES = frozenset(
    [
        "is",
        "are",
        "was",
        "were",
        "does",
        "do",
        "did",
        "can",
        "could",
        "should",
        "has",
        "have",
        "had",
        "will",
        "would",
        "may",
        "might",
    ]
)
# sentence openings that only report ("Our results show that", "In conclusion,")
_DISCOURSE = frozenset(
    """
    in conclusion summary overall thus therefore moreover furthermore however addition
    additionally importantly notably finally collectively together here taken
    """.split()  # noqa: SIM905
)
_REPORTERS = frozenset(
    """
    show shows showed shown suggest suggests suggested indicate indicates indicated
    demonstrate demonstrates demonstrated reveal reveals revealed support supports confirm
    confirms found find report reports reported conclude concluded observed propose
    proposed describe described identified
    """.split()  # noqa: SIM905
)
_REPORTING_SUBJECTS = frozenset(
    [
        "results",
        "data",
        "findings",
        "study",
        "studies",
        "observations",
        "analyses",
        "experiments",
        "we",
    ]
)


@dataclass(frozen=True, slots=True)
class Sentence:
    """A sentence of a snippet, cleaned for an answer, with the article it comes from."""

    pmid: str
    text: str


def statement(question: str, kind: str, yesno: str | None, names: Sequence[str]) -> str:
    """Return the answer stated first, in the question's words where it has a frame for it.

    >>> statement("Does dronedarone affect T3 levels?", "yesno", "yes", ())
    'Yes, dronedarone does affect T3 levels.'
    >>> statement("Is imatinib an antidepressant drug?", "yesno", "no", ())
    'No, imatinib is not an antidepressant drug.'
    >>> statement("What is the methyl donor of DNMTs?", "factoid", None, ["SAM", "ATP"])
    'SAM is the methyl donor of DNMTs.'
    >>> statement("Which genes cause FH?", "list", None, ["LDLR", "APOB", "PCSK9"])
    'LDLR, APOB and PCSK9.'
    >>> statement("Which drugs are used for FH?", "list", None, ["ezetimibe"])
    'ezetimibe is used for FH.'
    >>> statement("What drugs are used for FH?", "factoid", None, ["ezetimibe", "statins"])
    'ezetimibe is used for FH.'
    """
    body = " ".join(question.strip().rstrip("?. ").split())
    if kind == "yesno" and yesno in ("yes", "no"):
        return f"{yesno.capitalize()}, {declarative(body, negated=yesno == 'no')}."
    if kind not in ("factoid", "list") or not names:
        return ""
    shown = names[0] if kind == "factoid" else _enumerate(list(names))
    frame = _frame(body)
    if (kind == "factoid" or len(names) == 1) and frame.split(" ", 1)[0] in _SINGULAR:
        verb, _, rest = frame.partition(" ")
        frame = f"{_SINGULAR[verb]} {rest}"
    return f"{shown} {frame}." if frame else f"{shown}."


def declarative(question: str, *, negated: bool = False) -> str:
    """Turn a yes/no question into its claim: the auxiliary moves after the subject.

    The subject ends before the first word that cannot be in a noun phrase or is a participle
    ("Is Rheumatoid Arthritis related to ...": "Rheumatoid Arthritis is related to ...").

    >>> declarative("Does aspirin reduce recurrent infarction")
    'aspirin does reduce recurrent infarction'
    >>> declarative("Is it safe to take isotretinoin during pregnancy", negated=True)
    'it is not safe to take isotretinoin during pregnancy'
    >>> declarative("Are there any DNMT3 proteins present in plants")
    'there are any DNMT3 proteins present in plants'
    >>> declarative("Does the Oncotype DX test work with paraffin embedded tissues")
    'the Oncotype DX test does work with paraffin embedded tissues'
    >>> declarative("Does zorblaxine cure quuxitis")
    'zorblaxine does cure quuxitis'
    """
    first, _, rest = question.partition(" ")
    auxiliary = first.lower()
    if auxiliary not in _AUXILIARIES or not rest:
        return ("it is not the case that " if negated else "") + question
    verb = f"{auxiliary} not" if negated else auxiliary
    boundary = _subject_end(rest, auxiliary in ("does", "do", "did"))
    return f"{rest[:boundary].strip()} {verb} {rest[boundary:].strip()}".strip()


def _subject_end(rest: str, verb_follows: bool) -> int:
    """Where the subject of a question's remainder ends (the character offset).

    It ends before the first word that cannot be in a noun phrase, or a participle; after
    "do/does/did" the subject's phrase ends with the verb, so the verb is its last word when no
    listed verb comes first ("Does the test work with ...": "the test" | "work with ...").
    """
    tokens = words(rest)
    if not tokens:
        return 0
    if tokens[0].lower in FUNCTION_WORDS and tokens[0].lower not in ("the", "a", "an"):
        return tokens[0].end  # "it", "there": the pronoun is the subject
    for index, token in enumerate(tokens[1:], start=1):
        lower = token.lower
        if breaks_phrase(token.text) or (len(lower) > 4 and lower.endswith(("ed", "ing"))):
            if verb_follows and lower in FUNCTION_WORDS and index > 1:
                return tokens[index - 1].begin  # the word before is the verb
            return token.begin
    return tokens[1].begin if len(tokens) > 1 else len(rest)


def _enumerate(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


_SINGULAR = {"are": "is", "were": "was"}


def question_frame(question: str) -> str:
    """Return the predicate a stated answer would put its names into ("" when none).

    >>> question_frame("What is the antidote for heparin?")
    'is the antidote for heparin'
    """
    return _frame(" ".join(question.strip().rstrip("?. ").split()))


def _frame(question: str) -> str:
    """The predicate of a "What/Which [noun] is/are ..." question ("is the methyl donor of X")."""
    tokens = question.split()
    if not tokens or tokens[0].lower() not in ("what", "which"):
        return ""
    for index in (1, 2, 3):
        if index < len(tokens) and tokens[index].lower() in ("is", "are", "was", "were"):
            rest = " ".join(tokens[index + 1 :])
            return f"{tokens[index].lower()} {rest}" if rest else ""
    return ""


def clean(sentence: str) -> str:
    """Return a sentence without its structured-abstract label, statistics and lead-in.

    >>> clean("RESULTS: Our data show that aspirin lowered the risk (OR 0.7, p < 0.01) [4].")
    'Aspirin lowered the risk.'
    >>> clean("Conclusions: Survivin (BIRC5) is absent in normal tissue.")
    'Survivin (BIRC5) is absent in normal tissue.'
    """
    text = _drop_label(sentence.strip())
    text = _drop_groups(text)
    return _drop_lead(text)


def _drop_label(text: str) -> str:
    tokens = words(text)
    for count in range(1, min(4, len(tokens)) + 1):
        last = tokens[count - 1]
        if not all(t.lower in LABELS or t.lower == "and" for t in tokens[:count]):
            break
        after = text[last.end :].lstrip()
        if after.startswith((":", ".", "-", "\u2013")) and count <= 3:
            rest = after[1:].lstrip()
            return rest[:1].upper() + rest[1:] if rest else text
    return text


def _drop_groups(text: str) -> str:
    """Remove parenthesised or bracketed groups holding digits (statistics, citations)."""
    out: list[str] = []
    depth = 0
    group: list[str] = []
    for char in text:
        if char in "([":
            depth += 1
            group.append(char)
        elif char in ")]" and depth:
            depth -= 1
            group.append(char)
            if depth == 0:
                inside = "".join(group)
                if _keeps(inside[1:-1]):
                    out.append(inside)
                group = []
        elif depth:
            group.append(char)
        else:
            out.append(char)
    out.append("".join(group))
    cleaned = " ".join("".join(out).split())
    return re.sub(r"\s+([.,;:])", r"\1", cleaned)


def _keeps(inside: str) -> bool:
    """Whether a parenthesised group stays: a name or a definition, not statistics or a citation."""
    tokens = inside.split()
    if "et al" in inside or not tokens:
        return False
    if len(tokens) == 1:
        return any(c.isalpha() for c in inside)  # "(BIRC5)" stays, "(4)" and "[2004]" go
    return not any(c.isdigit() for c in inside)


def _drop_lead(text: str) -> str:
    """Drop an opening that only reports ("In conclusion, our results show that ...")."""
    tokens = words(text)
    position = 0
    while position < len(tokens) and tokens[position].lower in _DISCOURSE:
        position += 1
    start = tokens[position].begin if position < len(tokens) else 0
    if position and text[tokens[position - 1].end : start].strip(" ") == ",":
        pass  # "In conclusion, ..."
    elif position:
        position = 0  # a discourse word not set off by a comma belongs to the sentence
    lead = [t.lower for t in tokens[position : position + 5]]
    for size in range(1, 5):
        if size >= len(lead) or lead[size - 1] not in _REPORTING_SUBJECTS:
            continue
        if lead[size] in _REPORTERS:
            cut = position + size + 1
            if cut < len(tokens) and tokens[cut].lower == "that":
                cut += 1
            if cut < len(tokens):
                rest = text[tokens[cut].begin :]
                return rest[:1].upper() + rest[1:]
    if position and position < len(tokens):
        rest = text[tokens[position].begin :]
        return rest[:1].upper() + rest[1:]
    return text


def candidate_sentences(snippets: Sequence[Snippet]) -> list[Sentence]:
    """Return the distinct cleaned sentences of the snippets, in snippet order."""
    seen: set[str] = set()
    found: list[Sentence] = []
    for snippet in snippets:
        for begin, end in sentence_spans(snippet.text):
            text = clean(snippet.text[begin:end])
            key = " ".join(text.lower().split())
            if len(text.split()) < 3 or key in seen:
                continue
            seen.add(key)
            found.append(Sentence(snippet.pmid, text))
    return found


def _terms(text: str) -> list[str]:
    return [stem(w.lower) for w in words(text) if w.lower not in FUNCTION_WORDS]


def select(
    question: str,
    sentences: Sequence[Sentence],
    budget: int,
    *,
    meaning: SimilarityScorer | None = None,
) -> list[Sentence]:
    """Choose the sentences that address the question, diverse across articles (see above);
    with ``meaning``, relevance weighs each sentence's closeness to the question too."""
    if not sentences:
        return []
    terms = [_terms(s.text) for s in sentences]
    grams: list[set[str | tuple[str, str]]] = [set(t) | set(itertools.pairwise(t)) for t in terms]
    lexical = bm25_scores(_terms(question), terms)
    top = max(lexical) or 1.0
    relevance = [r / top for r in lexical]
    if meaning is not None:
        close = meaning.similarities(question, [s.text for s in sentences])
        relevance = [
            (1 - MEANING) * r + MEANING * max(0.0, c) for r, c in zip(relevance, close, strict=True)
        ]
    agreement = []
    for index, sentence in enumerate(sentences):
        others = [g for g, s in zip(grams, sentences, strict=True) if s.pmid != sentence.pmid]
        mine = grams[index]
        shared = sum(len(mine & g) / len(mine) for g in others) if mine else 0.0
        agreement.append(shared / max(1, len(others)))
    best = max(agreement) or 1.0
    score = [
        RELEVANCE * r + (1 - RELEVANCE) * a / best
        for r, a in zip(relevance, agreement, strict=True)
    ]
    chosen: list[int] = []
    per_article: dict[str, int] = {}
    spent = 0
    while spent < budget and len(chosen) < len(sentences):
        index = max(
            (i for i in range(len(sentences)) if i not in chosen),
            key=lambda i: (
                (1 - REDUNDANCY) * score[i]
                - REDUNDANCY * max((_overlap(grams[i], grams[j]) for j in chosen), default=0.0)
                - SAME_ARTICLE * per_article.get(sentences[i].pmid, 0)
            ),
        )
        chosen.append(index)
        per_article[sentences[index].pmid] = per_article.get(sentences[index].pmid, 0) + 1
        spent += len(sentences[index].text.split())
    return [sentences[i] for i in chosen]


def _overlap(mine: set[str | tuple[str, str]], theirs: set[str | tuple[str, str]]) -> float:
    return len(mine & theirs) / len(mine) if mine else 0.0
