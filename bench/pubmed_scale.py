"""PubMed-scale benchmark: build a large index from generated PubMed XML files, then time queries.

Generates ``--documents`` synthetic abstracts (default 1,000,000) as gzipped PubMed XML files of
30,000 citations each, like the annual baseline: titles and sentences of the shared PubMedQA and
CDR abstracts recombined at random, with fresh PMIDs; the last file is an update file that
revises 1,000 citations and withdraws 1,000 (``DeleteCitation``). Then it runs
``qabench index build --resume --procs P`` over them (reporting documents per second), and asks
the BioASQ 2013 questions: retrieval p50/p95 (BM25 top 50, over the compiled postings) and
end-to-end extractive answer p50/p95 (the default pipeline, with the indexes kept open as the
server keeps them; dense fusion is off because the generated corpus is not embedded). The
reference, measured in the same run, is Whoosh's own search of the first
``--reference-questions`` queries (same hits, same scores).
On a shared machine wall times follow the load, so CPU times are reported too: the build's CPU
seconds (this process and its writer processes) and each query's CPU milliseconds, which is
what they take on idle cores. ``--query-only`` times the queries over the index already built.

Run:  .venv/bin/python bench/pubmed_scale.py [--documents 1000000] [--procs 2] [--work DIR]
          [--questions 100] [--query-only] [--json]
"""

# ruff: noqa: E402 (the path fix below must run before the imports)
from __future__ import annotations

import sys
from pathlib import Path

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import argparse
import contextlib
import gzip
import json
import os
import random
import resource
import time
from collections.abc import Iterator
from typing import Any
from xml.sax.saxutils import escape

import numpy as np

from rag.corpus.reader import read_corpus
from rag.errors import QueryTooBroadError
from rag.models.generators import ExtractiveGenerator
from rag.pipeline import RagSystem
from rag.retrieval.index import IndexPool, open_index
from rag.retrieval.retrievers import Retriever, WhooshRetriever, question_query
from rag.run import RagSettings
from rag.text.sentences import sentence_spans
from server.cli import main as qabench

TRAINING = (
    "bioasq/balikasg_BioASQParticipantsArea/TrainingData2014/BioASQ_2013_TaskB.zip.d/"
    "BioASQ_2013_TaskB/BioASQ-trainingDataset2b.json"
)
SHARED = (
    "pubmed/pubmedqa_pubmedqa/data/ori_pqal.json",
    "pubmed/cryptoradon_biomedRelExt/CDR_Data/CDR.Corpus.v010516/CDR_TestSet.PubTator.titles_abstracts.tsv",
    "pubmed/cryptoradon_biomedRelExt/CDR_Data/CDR.Corpus.v010516/CDR_TrainingSet.PubTator.titles_abstracts.tsv",
)
PER_FILE = 30_000
# queries with wildcards, fuzzy terms and ranges: what each costs, or how fast it is refused
# (expansion bounds and the search time limit; anonymous users may type any of these)
MULTI_TERM = (
    "cardio*",
    "infarct~1/4",
    'aspirin AND "myocardial infarction"',
    "a*",
    "*mab",
    "infarction~2",
    "title:[a TO c]",
    "cardio* infarct* aspir* myocard*",
)
HEADER = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD '
    'PubMedArticle, 1st January 2025//EN" "https://dtd.nlm.nih.gov/ncbi/pubmed/out/'
    'pubmed_250101.dtd">\n<PubmedArticleSet>\n'
)


def citation(pmid: int, title: str, abstract: str) -> str:
    return (
        f"<PubmedArticle><MedlineCitation><PMID>{pmid}</PMID><Article><ArticleTitle>"
        f"{escape(title)}</ArticleTitle><Abstract><AbstractText>{escape(abstract)}"
        "</AbstractText></Abstract></Article></MedlineCitation></PubmedArticle>\n"
    )


def generate(data: Path, work: Path, documents: int) -> list[Path]:
    """Write the generated baseline and update files once; return them in order."""
    files = sorted(work.glob("pubmed*.xml.gz"))
    if files:
        return files
    work.mkdir(parents=True, exist_ok=True)
    titles, sentences = [], []
    for name in SHARED:
        for article in read_corpus(data / name):
            titles.append(article.title or "Untitled")
            sentences.extend(article.abstract[b:e] for b, e in sentence_spans(article.abstract))
    rng = random.Random(1_000_000)
    for number, start in enumerate(range(0, documents, PER_FILE), start=1):
        path = work / f"pubmed25n{number:04d}.xml.gz"
        with gzip.open(path, "wt", encoding="utf-8", compresslevel=1) as handle:
            handle.write(HEADER)
            for pmid in range(50_000_000 + start, 50_000_000 + min(documents, start + PER_FILE)):
                abstract = " ".join(rng.sample(sentences, rng.randint(5, 10)))
                handle.write(citation(pmid, rng.choice(titles), abstract))
            handle.write("</PubmedArticleSet>\n")
    update = work / f"pubmed25n{number + 1:04d}.xml.gz"
    with gzip.open(update, "wt", encoding="utf-8") as handle:
        handle.write(HEADER)
        for pmid in range(50_000_000, 50_001_000):
            handle.write(citation(pmid, "Revised " + rng.choice(titles), rng.choice(sentences)))
        handle.write("<DeleteCitation>")
        handle.write("".join(f"<PMID>{p}</PMID>" for p in range(50_001_000, 50_002_000)))
        handle.write("</DeleteCitation>\n</PubmedArticleSet>\n")
    return sorted(work.glob("pubmed*.xml.gz"))


def cpu_seconds() -> float:
    """Return the CPU time of this process and of its finished child processes."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def percentiles(values: list[float]) -> dict[str, float]:
    return {"p50": float(np.percentile(values, 50)), "p95": float(np.percentile(values, 95))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data"
    )
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--procs", type=int, default=2)
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument(
        "--reference-questions",
        type=int,
        default=20,
        help="questions also searched by Whoosh itself, as the reference (slow at scale)",
    )
    parser.add_argument("--work", type=Path, default=Path("bench-out/pubmed-scale"))
    parser.add_argument("--query-only", action="store_true", help="reuse the built index")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    work = args.work / f"n{args.documents}"
    started = time.perf_counter()
    files = generate(args.data, work / "xml", args.documents)
    print(f"generated {len(files)} files in {time.perf_counter() - started:.0f} s", flush=True)
    data_dir = work / "data"
    build: dict[str, float] = {}
    if not args.query_only:
        print(f"load average before the build: {os.getloadavg()}", flush=True)
        cpu_before = cpu_seconds()
        started = time.perf_counter()
        status = qabench(
            [
                "--data-dir",
                str(data_dir),
                "index",
                "build",
                "--resume",
                "--procs",
                str(args.procs),
                *map(str, files),
            ]
        )
        assert status == 0
        build["seconds"] = time.perf_counter() - started
        # CPU seconds of the build (this process and its writer processes): what it would
        # take on idle cores, whatever else the shared machine was doing
        build["cpu_seconds"] = cpu_seconds() - cpu_before
    with open_index(data_dir / "index") as index:
        count = index.info().documents
    if build:
        build["docs_per_s"] = count / build["seconds"]
        build["docs_per_cpu_second"] = count / build["cpu_seconds"]
        print(f"index build: {count} documents, {build}", flush=True)

    questions = json.loads((args.data / TRAINING).read_text("utf-8"))["questions"][: args.questions]
    retrieval, answer, retrieval_cpu, answer_cpu, whoosh = [], [], [], [], []
    with open_index(data_dir / "index") as index:
        info = index.info()
        retriever = WhooshRetriever(index)
        for q in questions:
            t, c = time.perf_counter(), time.process_time()
            retriever.search(question_query(q["body"]), 50, question=q["body"])
            retrieval.append((time.perf_counter() - t) * 1000)
            retrieval_cpu.append((time.process_time() - c) * 1000)
        multi_term: dict[str, dict[str, object]] = {}
        for query in MULTI_TERM:
            t = time.perf_counter()
            try:
                outcome = f"{len(index.search(query, 50))} hits"
            except QueryTooBroadError as exc:
                outcome = "refused: " + exc.detail[:60]
            multi_term[query] = {"ms": round((time.perf_counter() - t) * 1000), "outcome": outcome}
        # the reference, in the same run: the same queries scored by Whoosh itself
        for q in questions[: args.reference_questions]:
            t = time.perf_counter()
            index.search(question_query(q["body"]), 50, compiled_postings=False, time_limit=None)
            whoosh.append((time.perf_counter() - t) * 1000)

    pool = IndexPool(data_dir / "index")  # as the server keeps its opened indexes

    @contextlib.contextmanager
    def opener() -> Iterator[Retriever]:
        with pool.checkout() as index:
            yield WhooshRetriever(index)

    system = RagSystem(opener, ExtractiveGenerator(), RagSettings())
    for q in questions:
        t, c = time.perf_counter(), time.process_time()
        system.ask(q["body"], kind=q["type"])
        answer.append((time.perf_counter() - t) * 1000)
        answer_cpu.append((time.process_time() - c) * 1000)
    report: dict[str, Any] = {
        "load_average_1_5_15": [round(x, 2) for x in os.getloadavg()],
        "documents": count,
        "build": build,
        "retrieval_ms": percentiles(retrieval),
        "retrieval_cpu_ms": percentiles(retrieval_cpu),
        "segments": {"all": info.segments, "compiled": info.compiled_segments},
        "whoosh_search_ms": percentiles(whoosh),
        "speedup_p50_vs_whoosh": round(
            float(np.percentile(whoosh, 50)) / float(np.percentile(retrieval, 50)), 1
        ),
        "answer_ms": percentiles(answer),
        "answer_cpu_ms": percentiles(answer_cpu),
        "multi_term_queries": multi_term,
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
