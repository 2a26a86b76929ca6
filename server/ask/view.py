"""What the ask page shows of a run: sentences with citation links, snippets with anchors.

Every citation links to the first snippet of its article on the same page (``#snippet-N``)
and to the article itself (``https://pubmed.ncbi.nlm.nih.gov/<pmid>/`` for a PMID; the resource
for a knowledge-base IRI), as a plain link the server never fetches. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass

from rag.answering.evidence import CLOSE_ALONE, CLOSE_ENOUGH
from rag.run import RagRun, StageTiming

PUBMED = "https://pubmed.ncbi.nlm.nih.gov/"


def article_url(pmid: str) -> str | None:
    """Return the public page of a document id (PubMed for PMIDs, the IRI itself for http IRIs).

    >>> article_url("123"), article_url("http://dbpedia.org/resource/X"), article_url("x:y")
    ('https://pubmed.ncbi.nlm.nih.gov/123/', 'http://dbpedia.org/resource/X', None)
    """
    if pmid.isdigit():
        return f"{PUBMED}{pmid}/"
    if pmid.startswith(("http://", "https://")):
        return pmid
    return None


@dataclass(frozen=True, slots=True)
class CitationLink:
    """A verified citation: the id, the in-page anchor of its first snippet, the article."""

    pmid: str
    anchor: str | None
    url: str | None


@dataclass(frozen=True, slots=True)
class SentenceView:
    """One cited-answer sentence (``body`` and ``stop``: the text around the citations)."""

    body: str
    stop: str
    citations: tuple[CitationLink, ...]
    removed: tuple[str, ...]
    flagged: bool
    support: float | None = None
    unsupported: bool = False
    problems: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SnippetView:
    """One snippet of the list (``anchor`` is its element id)."""

    number: int
    anchor: str
    pmid: str
    url: str | None
    text: str
    section: str
    begin: int
    end: int
    score: float


@dataclass(frozen=True, slots=True)
class DocumentView:
    """One retrieved document."""

    rank: int
    pmid: str
    url: str | None
    score: float
    title: str


@dataclass(frozen=True, slots=True)
class ResultView:
    """Everything the result part of the ask page renders."""

    question: str
    question_type: str
    expanded_query: str
    query_edited: bool
    query_run: str
    fallback: str
    short_answer: str
    sentences: tuple[SentenceView, ...]
    exact: tuple[str, ...]
    # how to read ``exact`` (factoid candidates are ranked guesses; empty for yes/no)
    exact_reading: str
    snippets: tuple[SnippetView, ...]
    documents: tuple[DocumentView, ...]
    timings: tuple[StageTiming, ...]
    total_millis: float
    warnings: tuple[str, ...]
    generator: str
    model: str
    run_href: str | None
    run_iri: str | None
    answered: bool = True
    abstention: str = ""
    # the index that answered: its name, document count, whether it is the demo
    index_name: str = ""
    index_documents: int = 0
    index_demo: bool = False
    # how the run judged whether the evidence addresses the question (empty: not judged)
    evidence_check: str = ""
    # how a yes/no question's yes or no was read (empty: not a yes/no run)
    yesno_check: str = ""


def _split_stop(text: str) -> tuple[str, str]:
    """Split the closing punctuation off a sentence, so citations go before it.

    >>> _split_stop("Aspirin helps.")
    ('Aspirin helps', '.')
    """
    body = text.rstrip()
    stripped = body.rstrip(".!?")
    return stripped.rstrip(), body[len(stripped) :]


def result_view(run: RagRun, run_iri: str | None, run_href: str | None) -> ResultView:
    """Return the page's view of a run."""
    snippets = tuple(
        SnippetView(
            number=n,
            anchor=f"snippet-{n}",
            pmid=s.pmid,
            url=article_url(s.pmid),
            text=s.text,
            section=s.begin_section,
            begin=s.offset_begin,
            end=s.offset_end,
            score=s.score,
        )
        for n, s in enumerate(run.snippets, start=1)
    )
    first: dict[str, str] = {}
    for view in snippets:
        first.setdefault(view.pmid, view.anchor)
    sentences = tuple(
        SentenceView(
            *_split_stop(s.text),
            tuple(CitationLink(p, first.get(p), article_url(p)) for p in s.citations),
            s.removed,
            s.flagged,
            s.support,
            s.unsupported,
            s.problems,
        )
        for s in run.cited_answer.sentences
    )
    return ResultView(
        question=run.question,
        question_type=run.question_type,
        expanded_query=run.expanded_query,
        query_edited=run.query_edited,
        query_run=run.query_run,
        fallback=run.fallback,
        short_answer=run.short_answer,
        sentences=sentences,
        exact=run.exact_answer.values(),
        exact_reading=run.exact_answer.reading(),
        snippets=snippets,
        documents=tuple(
            DocumentView(d.rank, d.pmid, article_url(d.pmid), d.score, d.title)
            for d in run.documents
        ),
        timings=run.timings,
        total_millis=run.total_millis,
        warnings=run.warnings,
        generator=run.generator.name,
        model=run.generator.model,
        run_href=run_href,
        run_iri=run_iri,
        answered=run.answered,
        abstention=run.abstention,
        index_name=run.index.name if run.index is not None else "",
        index_documents=run.index.documents if run.index is not None else 0,
        index_demo=run.index.demo if run.index is not None else False,
        evidence_check=evidence_check(run),
        yesno_check=yesno_check(run),
    )


def evidence_check(run: RagRun) -> str:
    """Say how the run judged whether its evidence addresses the question: by words and
    meaning (with the closeness found and the two thresholds), or by words only and why."""
    settings = dict(run.settings)
    check = settings.get("evidence_check", "")
    closeness = settings.get("evidence_closeness")
    if not check or closeness is None:
        return check
    return (
        f"{check}: the closest sentence read has cosine {float(closeness):.3f} with the "
        f"question ({CLOSE_ENOUGH:.2f} needed beside the words; {CLOSE_ALONE:.2f} answers alone)"
    )


def yesno_check(run: RagRun) -> str:
    """Say how an answered yes/no run read its yes or no (empty for other runs)."""
    return dict(run.settings).get("yesno_check", "") if run.answered else ""
