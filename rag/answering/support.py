"""Citation support: does the text a sentence cites state what the sentence claims?

A PMID whitelist only says that the cited article was shown. Every cited sentence is checked
against the text of the articles it cites, in two ways:

* **overlap** (the score): the share of the sentence's content terms (the index analyzer's:
  lowercase, no stop words, stemmed) found in the article's best-matching sentence, averaged
  with the share found anywhere in the article; with the MiniLM model loaded
  (``rag.dense_rerank``) the mean with the best sentence cosine. The best cited article counts.
* **agreement** (``claim_problems``, over all cited articles together), read with
  ``rag.text.claims``: every **name** of the sentence (symbols, capitalised names) and every
  **number** must occur in the cited text; each clause of the sentence is compared with the
  cited clause that covers most of it, and their **negation** and **direction** (increase or
  decrease) must agree; a sentence stating the answer ("Yes, X does Y." / "No, X does not Y.")
  must have its claim backed by the evidence of the cited text (``rag.answering.yesno``).

A sentence is **supported** when its score reaches the threshold (``rag.support_threshold``,
0.5) and nothing disagrees; ``AnswerSentence.problems`` says what did. The false claims of
``rag.answering.perturb`` (number changed, negation flipped, entity swapped, unrelated
citation) measure how many wrong claims this catches (``bench/rag.py``). Pure apart from the
optional model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from rag.answering.citations import AnswerSentence, CitedAnswer
from rag.answering.evidence import content_keys, key, keys, pairs, together, topic
from rag.answering.snippets import SimilarityScorer
from rag.answering.yesno import weigh
from rag.corpus.article import Article
from rag.text.claims import Clause, read
from rag.text.phrases import stem, words
from rag.text.sentences import sentence_spans

DEFAULT_THRESHOLD = 0.25
# the dense model scores at most this many document sentences per cited document
_MAX_SENTENCES = 40
# a claim clause is compared with the cited clause covering most of it, when that covers this
_MATCH = 0.5
# ... and when it covers this much, the claim's names must be in it (not swapped for others)
_NAMES_MATCH = 0.7
_STATED = ("Yes, ", "No, ")
# a cited sentence with fewer words is a fragment ("tissue."), never supported
MIN_WORDS = 3


def lexical_support(
    claim: str, document: Article, tokenize: Callable[[str], list[str]]
) -> float | None:
    """Return the lexical support of ``claim`` by ``document`` in [0, 1] (None: no terms).

    >>> from rag.corpus.article import Article
    >>> doc = Article("1", "Aspirin trial.", "Aspirin lowered the rate of infarction. It was safe.")
    >>> words = lambda text: [w.strip(".").lower() for w in text.split()]
    >>> lexical_support("Aspirin lowered the rate of infarction.", doc, words)
    1.0
    >>> round(lexical_support("Aspirin cures diabetes.", doc, words), 2)
    0.33
    """
    terms = set(tokenize(claim))
    if not terms:
        return None
    sentences = [set(tokenize(text)) for text in _sentences(document)]
    whole = set().union(*sentences) if sentences else set()
    best = max((len(terms & s) for s in sentences), default=0)
    return 0.5 * best / len(terms) + 0.5 * len(terms & whole) / len(terms)


def support_scores(
    answer: CitedAnswer,
    documents: Mapping[str, Article],
    tokenize: Callable[[str], list[str]],
    *,
    dense: SimilarityScorer | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    question: str = "",
) -> CitedAnswer:
    """Return the answer with every cited sentence's support score and verdict filled in.

    Args:
        answer: the checked cited answer (citations already limited to shown documents).
        documents: the articles by PMID (or IRI) that citations may name.
        question: the question; its own names and numbers need not be in the cited text (an
            answer restating the question's words claims nothing about them).
        tokenize: the index analyzer.
        dense: the MiniLM scorer, when loaded.
        threshold: the score a supported sentence reaches.

    Returns:
        The same sentences; uncited ones keep ``support`` None.
    """
    return CitedAnswer(
        tuple(_scored(s, documents, tokenize, dense, threshold, question) for s in answer.sentences)
    )


def support_rate(answers: Sequence[CitedAnswer]) -> float | None:
    """Return the share of cited sentences that are supported (None: nothing was cited).

    >>> support_rate([CitedAnswer((AnswerSentence("a", ("1",), support=0.9, supported=True),
    ...                            AnswerSentence("b", ("2",), support=0.1, supported=False)))])
    0.5
    """
    verdicts = [s.supported for a in answers for s in a.sentences if s.supported is not None]
    return sum(verdicts) / len(verdicts) if verdicts else None


def _scored(
    sentence: AnswerSentence,
    documents: Mapping[str, Article],
    tokenize: Callable[[str], list[str]],
    dense: SimilarityScorer | None,
    threshold: float,
    question: str = "",
) -> AnswerSentence:
    cited = [documents[p] for p in sentence.citations if p in documents]
    if not cited:
        return sentence
    best = 0.0
    for document in cited:
        lexical = lexical_support(sentence.text, document, tokenize)
        if lexical is None:
            continue
        score = lexical
        if dense is not None:
            texts = _sentences(document)[:_MAX_SENTENCES]
            cosine = max(dense.similarities(sentence.text, texts), default=0.0) if texts else 0.0
            score = 0.5 * lexical + 0.5 * max(0.0, cosine)
        best = max(best, score)
    texts = [t for d in cited for t in _sentences(d)]
    problems = tuple(
        sorted(
            (
                *claim_problems(sentence.text, texts, given=question),
                *_off_question(sentence.text, [_sentences(d) for d in cited], question),
            )
        )
    )
    if best < threshold:
        problems = (f"it shares too little with the cited text ({best:.2f})", *problems)
    return replace(sentence, support=round(best, 4), supported=not problems, problems=problems)


def _off_question(claim: str, cited: Sequence[Sequence[str]], question: str) -> list[str]:
    """What makes a sentence no answer to ``question`` whatever its citation says.

    * fewer than three words ("tissue.", "HBV."): a fragment claims nothing on its own;
    * a sentence that mentions none of the question's anchors (what it is about): it does not
      answer this question, even if the cited text backs it;
    * a sentence that restates the question's subject ("X is mutated in cystic fibrosis.",
      "Yes, BRCA1 is a tumour suppressor gene.") needs a cited sentence (or two in a row)
      that mentions every anchor of the question too, with one of the words the claim adds to
      the question ("X"; its names first, when it has any), and with the particular kind the
      question asks for when the claim names it ("thrombocytopenia is the antidote for
      heparin." needs a cited sentence of heparin, thrombocytopenia and an antidote): the
      cited text must state the relation, not only mention its parts apart.
    """
    problems: list[str] = []
    if len(words(claim)) < MIN_WORDS:
        problems.append(f"a fragment of fewer than {MIN_WORDS} words states no claim")
    if not question:
        return problems
    about = topic(question)
    if not about.anchors:
        return problems
    found = keys(claim)
    if not any(a.mentioned_by(found) or max(a.keys, key=len) in found for a in about.anchors):
        problems.append(f"it does not mention {about.named()}, which the question asks about")
    elif together(about, found):
        body = next((claim[len(p) :] for p in _STATED if claim.startswith(p)), claim)
        asked = keys(question)
        names = {key(n) for c in read(body) for n in c.entities} & (keys(body) - asked)
        added = names or content_keys(body) - asked
        kind = about.head if about.head and about.head in found else ""
        spans = [p for sentences in cited for p in pairs([keys(t) for t in sentences])]
        if not any(
            together(about, c) and (not added or added & c) and (not kind or kind in c)
            for c in spans
        ):
            missing = [f"the {about.focus}"] if kind else []
            missing += ["what the sentence names"] if added else []
            problems.append(
                f"no cited sentence states it: none mentions {about.named()} together"
                + (f" with {' and '.join(missing)}" if missing else "")
            )
    return problems


def claim_problems(claim: str, texts: Sequence[str], *, given: str = "") -> list[str]:
    """Return what in ``claim`` the cited ``texts`` (their sentences) do not state.

    Names and numbers that ``given`` (the question) contains need not be in the texts.

    >>> source = ["Aspirin lowered recurrent infarction in 1,204 patients."]
    >>> claim_problems("Aspirin lowered recurrent infarction in 1,204 patients.", source)
    []
    >>> claim_problems("Aspirin lowered recurrent infarction in 2,408 patients.", source)
    ['the number 2408 is not in the cited text']
    >>> claim_problems("Aspirin did not lower recurrent infarction.", source)[0][:45]
    'the cited text does not state it negated: "As'
    >>> claim_problems("Clopidogrel lowered recurrent infarction.", source)[0]
    '"clopidogrel" is not in the cited text'
    >>> claim_problems("Aspirin raised recurrent infarction.", source)[0][:42]
    'the cited text states the opposite change:'
    """
    clauses = [c for text in texts for c in read(text)]
    tokens = {w.lower for text in (*texts, given) for w in words(text)}
    stems = {stem(t) for t in tokens}
    numbers = {n for c in (*clauses, *read(given)) for n in c.numbers}
    problems: list[str] = []
    stated = next((p for p in _STATED if claim.startswith(p)), None)
    if stated is not None:
        # "Yes, X." / "No, X (negated)": the evidence of the cited text must back X
        claim = claim[len(stated) :]
        if weigh(claim, texts).answer() != "yes":
            problems.append(f'the cited text does not back "{stated.rstrip(", ")}"')
    for clause in read(claim):
        for name in sorted(clause.entities):
            if name not in tokens and stem(name) not in stems:
                problems.append(f'"{name}" is not in the cited text')
        for number in clause.numbers:
            if number not in numbers:
                problems.append(f"the number {number} is not in the cited text")
        if stated is None:
            problems.extend(_disagreement(clause, clauses))
    return list(dict.fromkeys(problems))


def _disagreement(clause: Clause, cited: Sequence[Clause]) -> list[str]:
    """Compare a claim clause with the cited clause (a finding, not an aim) covering most of it.

    Negation and direction must agree, and the claim's names must be in that clause.
    """
    findings = list(cited) if clause.asks else [c for c in cited if not c.asks]
    if len(clause.stems) < 2 or not findings:
        return []
    best = max(findings, key=lambda c: len(clause.stems & c.stems))
    if len(clause.stems & best.stems) < _MATCH * len(clause.stems):
        return []
    quoted = f'"{best.text[:160]}"'
    # a name of the claim missing where the cited clause names another one: swapped names
    missing = sorted(n for n in clause.entities - best.entities if n not in best.text.lower())
    rivals = sorted(n for n in best.entities - clause.entities if n not in clause.text.lower())
    if missing and rivals and len(clause.stems & best.stems) >= _NAMES_MATCH * len(clause.stems):
        return [f'the cited text says it of "{rivals[0]}", not "{missing[0]}": {quoted}']
    if clause.negations != best.negations:
        state = "negated" if clause.negated else "without negation"
        return [f"the cited text does not state it {state}: {quoted}"]
    if clause.direction and best.direction and (clause.direction > 0) != (best.direction > 0):
        return [f"the cited text states the opposite change: {quoted}"]
    return []


def _sentences(document: Article) -> list[str]:
    return [
        section[begin:end]
        for section in (document.title, document.abstract)
        for begin, end in sentence_spans(section)
    ]
