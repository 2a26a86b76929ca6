"""Retrieval benchmark: qabench's Whoosh retriever next to bm25s on PubMedQA + CDR abstracts.

Indexes the 1,000 PubMedQA abstracts and the 1,500 distinct CDR abstracts, then asks each
PubMedQA question and checks where its own PMID lands: recall@1, @10 and @50. Both engines
see the same corpus and the same terms: bm25s indexes the token lists that qabench's index
analyzer (lowercase, Whoosh stop words, Porter stemming) makes of title + abstract, and its
queries are the analyzer's terms of the query the Whoosh retriever runs (``question_query``).
Also reports index build throughput and per-query latency (p50/p95).

Run:  .venv/bin/python bench/retrieval.py [--data ../shared/data] [--json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import bm25s
import numpy as np

from rag.corpus.article import Article
from rag.corpus.reader import read_corpus
from rag.retrieval.index import open_index
from rag.retrieval.retrievers import WhooshRetriever, question_query

PUBMEDQA = "pubmed/pubmedqa_pubmedqa/data/ori_pqal.json"
CDR = "pubmed/cryptoradon_biomedRelExt/CDR_Data/CDR.Corpus.v010516"
CUTOFFS = (1, 10, 50)
K = 50


def load_corpus(data: Path) -> tuple[list[Article], dict[str, str]]:
    """Return the deduplicated articles and the PubMedQA questions keyed by PMID."""
    questions = {
        pmid: entry["QUESTION"]
        for pmid, entry in json.loads((data / PUBMEDQA).read_text("utf-8")).items()
    }
    articles: dict[str, Article] = {}
    for path in [data / PUBMEDQA, *sorted((data / CDR).glob("*.tsv"))]:
        for article in read_corpus(path):
            articles.setdefault(article.pmid, article)
    return list(articles.values()), questions


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def evaluate(
    search: Callable[[str], list[str]], questions: dict[str, str]
) -> tuple[dict[int, float], list[float]]:
    """Return recall at each cutoff and the per-query latencies (seconds)."""
    found = dict.fromkeys(CUTOFFS, 0)
    latencies = []
    for pmid, question in questions.items():
        started = time.perf_counter()
        ranked = search(question)
        latencies.append(time.perf_counter() - started)
        for cutoff in CUTOFFS:
            found[cutoff] += pmid in ranked[:cutoff]
    return {c: found[c] / len(questions) for c in CUTOFFS}, latencies


def run(data: Path) -> dict[str, object]:
    articles, questions = load_corpus(data)
    with tempfile.TemporaryDirectory() as tmp, open_index(Path(tmp) / "ix", create=True) as index:
        started = time.perf_counter()
        index.add(articles)
        whoosh_build = time.perf_counter() - started
        retriever = WhooshRetriever(index)

        def whoosh_search(question: str) -> list[str]:
            result = retriever.search(question_query(question), K, question=question)
            return [d.pmid for d in result.documents]

        started = time.perf_counter()
        corpus_tokens = [index.tokenize(f"{a.title} {a.abstract}") for a in articles]
        engine = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
        engine.index(corpus_tokens, show_progress=False)
        bm25s_build = time.perf_counter() - started
        ids = np.asarray([a.pmid for a in articles])

        def bm25s_search(question: str) -> list[str]:
            terms = index.tokenize(question_query(question))
            if not terms:
                return []
            docs, scores = engine.retrieve([terms], k=K, show_progress=False, n_threads=1)
            return [str(ids[d]) for d, s in zip(docs[0], scores[0], strict=True) if s > 0]

        whoosh_recall, whoosh_latency = evaluate(whoosh_search, questions)
        bm25s_recall, bm25s_latency = evaluate(bm25s_search, questions)
    return {
        "corpus": len(articles),
        "questions": len(questions),
        "whoosh": summary(whoosh_recall, whoosh_latency, len(articles) / whoosh_build),
        "bm25s": summary(bm25s_recall, bm25s_latency, len(articles) / bm25s_build),
    }


def summary(recall: dict[int, float], latencies: list[float], rate: float) -> dict[str, float]:
    return {
        **{f"recall@{c}": recall[c] for c in CUTOFFS},
        "build_docs_per_s": rate,
        "query_p50_ms": 1000 * percentile(latencies, 50),
        "query_p95_ms": 1000 * percentile(latencies, 95),
    }


def print_table(result: dict[str, object]) -> None:
    whoosh, other = result["whoosh"], result["bm25s"]
    assert isinstance(whoosh, dict) and isinstance(other, dict)
    print(f"corpus: {result['corpus']} abstracts (PubMedQA + CDR); {result['questions']} questions")
    print(f"{'measure':<18}{'whoosh (qabench)':>18}{'bm25s':>12}{'difference':>12}{'w/b':>9}")
    for key in whoosh:
        w, b = whoosh[key], other[key]
        scale = 100 if key.startswith("recall") else 1
        unit = " pt" if key.startswith("recall") else ""
        ratio = f"{w / b:.2f}" if b else "-"
        print(
            f"{key:<18}{w * scale:>18.2f}{b * scale:>12.2f}{(w - b) * scale:>+9.2f}{unit:<3}{ratio:>9}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared/data"
    )
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    args = parser.parse_args()
    result = run(args.data)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_table(result)


if __name__ == "__main__":
    main()
