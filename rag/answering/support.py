"""Citation support: is a cited sentence backed by the text of the document it cites?

A PMID whitelist only says that the cited article was shown; it does not say that the article
says what the sentence claims. Here every cited sentence is scored against each cited document:

* **lexical**: the share of the sentence's content terms (the index analyzer's terms: lowercase,
  no stop words, stemmed) found in the document's best-matching sentence, averaged with the share
  found anywhere in the document (a claim drawn from two sentences of one abstract still scores);
* **dense** (when the MiniLM model is loaded): the best cosine between the sentence and a
  sentence of the document, clipped at 0; the score is then the mean of lexical and dense.

The sentence's support is its best score over its cited documents; it counts as supported when
that reaches the threshold (``rag.support_threshold``, 0.5). A sentence copied from its cited
abstract scores 1; "anastrozole cures type 2 diabetes" citing a breast-cancer abstract that
mentions anastrozole scores about 0.2. Pure apart from the optional model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from rag.answering.citations import AnswerSentence, CitedAnswer
from rag.answering.snippets import SimilarityScorer
from rag.corpus.article import Article
from rag.text.sentences import sentence_spans

DEFAULT_THRESHOLD = 0.5
# the dense model scores at most this many document sentences per cited document
_MAX_SENTENCES = 40


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
) -> CitedAnswer:
    """Return the answer with every cited sentence's support score and verdict filled in.

    Args:
        answer: the checked cited answer (citations already limited to shown documents).
        documents: the articles by PMID (or IRI) that citations may name.
        tokenize: the index analyzer.
        dense: the MiniLM scorer, when loaded.
        threshold: the score a supported sentence reaches.

    Returns:
        The same sentences; uncited ones keep ``support`` None.
    """
    return CitedAnswer(
        tuple(_scored(s, documents, tokenize, dense, threshold) for s in answer.sentences)
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
    return replace(sentence, support=round(best, 4), supported=best >= threshold)


def _sentences(document: Article) -> list[str]:
    return [
        section[begin:end]
        for section in (document.title, document.abstract)
        for begin, end in sentence_spans(section)
    ]
