"""RAG benchmark: answers (phase B, baselines, false claims) and retrieval (phase A) of qabench.

Phase B, the baselines, PubMedQA yes/no and the false-claim catch rate come from
``bench/rag_quality.py`` (see there); phase A is below.

Corpus: the BioASQ 2013 training questions name their documents only as PMIDs, so the corpus is
rebuilt from their gold snippets (``rag.corpus.bioasq_snippets``): per PMID, each title and
abstract snippet sits at its gold offset. **This flatters every number**: every sentence of the
corpus is a gold snippet of some question, and the words between snippets are missing.
Distractors (``--distractors N``, N times the corpus size): synthetic abstracts made of
sentences of the shared PubMedQA and CDR abstracts, recombined, with fresh PMIDs.

Systems, all with the extractive generator and asked the same questions with their BioASQ type:

* ``bm25s``: a plain bm25s (Lucene BM25, k1 1.2, b 0.75) over qabench's analyzer tokens of
  title + abstract (the strongest plain BM25 measured), the same extractive snippet and answer
  code on its top 50, snippets ranked by their own BM25 only (no document prior);
* ``qabench``: the default configuration (Whoosh ``text`` field with Lucene idf, dense fusion
  over stored MiniLM vectors, lexical snippets with the document prior, citation check);
* ``-fusion``: the default without dense fusion; ``-doc-prior``: without the snippet document
  prior (``rag.snippet_document_weight`` 0); ``+feedback``: with pseudo-relevance feedback
  expansion (``rag.query_feedback``); ``+snippet-dense``: with the MiniLM snippet rerank too
  (``--configs`` chooses; it is slow on 2 cores).

Vectors: only the documents that reach some question's top 50 BM25 candidates are embedded
(fusion reads no other vector, so the numbers are those of a fully embedded corpus);
``--embed-all`` embeds everything, as ``qabench index embed`` does.

Reported per system: documents MAP, snippet mean F1, yes/no macro F1, factoid MRR, list mean F1,
ideal ROUGE-2 F1 (official BioASQ semantics, ``evaluate_bioasq``), citation support (share of
cited sentences backed by their cited abstract) and end-to-end latency p50/p95.

Knowing when not to answer and the later BioASQ years (``--parts heldb,abstain --held-out
DIR``): see ``bench/rag_trust.py``.

Run:  .venv/bin/python bench/rag.py [--data ../shared/data] [--parts b,claims,a,heldb,abstain]
          [--held-out DIR]
          [--questions N] [--distractors 0,10]
          [--configs bm25s,qabench,+feedback,-fusion,-doc-prior,+snippet-dense] [--embed-all]
          [--work DIR] [--json]
"""

# ruff: noqa: E402 (the path fix below must run before the imports)
from __future__ import annotations

import sys
from pathlib import Path

# This script is called rag.py: without its own directory on the path, "rag" is the package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import argparse
import contextlib
import importlib.util
import json
import random
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import bm25s
import numpy as np

from evaluators.bioasq.scoring import evaluate_bioasq
from evaluators.formats import parse_bytes
from evaluators.model import Dataset
from rag.answering.support import support_rate
from rag.corpus.article import Article
from rag.corpus.bioasq_snippets import read_bioasq_snippets
from rag.corpus.reader import read_corpus
from rag.models.dense import DenseScorer
from rag.models.generators import ExtractiveGenerator
from rag.pipeline import RagSystem
from rag.retrieval.index import Hit, open_index
from rag.retrieval.retrievers import (
    Retriever,
    SearchResult,
    WhooshRetriever,
    question_query,
    search_with_fallback,
)
from rag.retrieval.vectors import Hybrid, embed_articles, load_vectors
from rag.run import RagRun, RagSettings
from rag.text.sentences import sentence_spans
from server.ask.payloads import bioasq_question

TRAINING = (
    "bioasq/balikasg_BioASQParticipantsArea/TrainingData2014/BioASQ_2013_TaskB.zip.d/"
    "BioASQ_2013_TaskB/BioASQ-trainingDataset2b.json"
)
SHARED = (
    "pubmed/pubmedqa_pubmedqa/data/ori_pqal.json",
    "pubmed/cryptoradon_biomedRelExt/CDR_Data/CDR.Corpus.v010516/CDR_TestSet.PubTator.titles_abstracts.tsv",
    "pubmed/cryptoradon_biomedRelExt/CDR_Data/CDR.Corpus.v010516/CDR_TrainingSet.PubTator.titles_abstracts.tsv",
)
COLUMNS = (
    ("documents", "map", "doc MAP"),
    ("snippets", "mean_f1", "snip F1"),
    ("yesno", "accuracy", "yn acc"),
    ("yesno", "macro_f1", "yn F1"),
    ("factoid", "mrr", "fact MRR"),
    ("list", "mean_f1", "list F1"),
    ("ideal", "rouge2_recall", "R-2 rec"),
    ("ideal", "rouge2_f1", "R-2 F1"),
)
# the defaults of rag.top_k and rag.dense_depth
TOP_K, DEPTH = 50, 50


def distractors(data: Path, count: int, seed: int = 16) -> list[Article]:
    """Return ``count`` synthetic abstracts of 3-6 sentences from the shared abstracts."""
    sentences: list[str] = []
    titles: list[str] = []
    for name in SHARED:
        for article in read_corpus(data / name):
            titles.append(article.title)
            sentences.extend(article.abstract[b:e] for b, e in sentence_spans(article.abstract))
    rng = random.Random(seed)
    return [
        Article(
            str(90_000_000 + n),
            rng.choice(titles) if rng.random() < 0.7 else "",
            " ".join(rng.sample(sentences, rng.randint(3, 6))),
        )
        for n in range(count)
    ]


class Bm25sRetriever:
    """The baseline behind the ``Retriever`` role: bm25s over qabench's analyzer tokens."""

    def __init__(self, articles: list[Article], tokenize: Callable[[str], list[str]]) -> None:
        self._articles = articles
        self.tokenize = tokenize
        self._engine = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
        self._engine.index(
            [tokenize(f"{a.title} {a.abstract}") for a in articles], show_progress=False
        )

    def _run(self, query: str, k: int) -> tuple[Hit, ...]:
        terms = self.tokenize(query)
        if not terms:
            return ()
        docs, scores = self._engine.retrieve([terms], k=k, show_progress=False, n_threads=1)
        return tuple(
            Hit(self._articles[int(d)], float(s))
            for d, s in zip(docs[0], scores[0], strict=True)
            if s > 0
        )

    def search(self, query: str, k: int = 50, *, question: str | None = None) -> SearchResult:
        return search_with_fallback(self._run, query, k, question=question)

    def label(self) -> None:
        return None  # a bench corpus in memory, not a named index


def build(
    work: Path,
    articles: list[Article],
    encoder: DenseScorer,
    questions: list[dict[str, Any]],
    embed_all: bool,
) -> Path:
    """Build (once) the Whoosh index and its vectors in ``work``.

    Without ``embed_all`` only the documents that reach some question's top ``DEPTH`` BM25
    candidates get a vector: dense fusion reads no other vector, so every number is the same
    as with the whole corpus embedded, at a fraction of the cost (the distractors are mostly
    never candidates). ``--embed-all`` pays the full cost (``qabench index embed``'s).
    """
    index_dir = work / "index"
    if not list(index_dir.glob("_MAIN_*.toc")):  # a committed Whoosh index
        started = time.perf_counter()
        with open_index(index_dir, create=True) as index:
            index.add(articles)
        print(f"  indexed {len(articles)} in {time.perf_counter() - started:.0f} s", flush=True)
    started = time.perf_counter()
    with open_index(index_dir) as index:
        index.compile()  # an index built before compiled postings existed gets them now
        chosen: Iterable[Article] = index.articles()
        if not embed_all:
            retriever = WhooshRetriever(index)
            wanted: set[str] = set()
            for q in questions:
                found = retriever.search(question_query(q["body"]), TOP_K, question=q["body"])
                wanted.update(d.pmid for d in found.documents[:DEPTH])
            chosen = [a for a in articles if a.pmid in wanted]
        report = embed_articles(index_dir, chosen, encoder, batch=1024)
    if report.embedded:
        print(f"  embedded {report.embedded} in {time.perf_counter() - started:.0f} s", flush=True)
    return index_dir


def systems(
    index_dir: Path, articles: list[Article], encoder: DenseScorer, configs: list[str]
) -> dict[str, RagSystem]:
    @contextlib.contextmanager
    def whoosh() -> Iterator[Retriever]:
        with open_index(index_dir) as index:
            yield WhooshRetriever(index)

    with open_index(index_dir) as index:
        tokenize = index.tokenize
    baseline = Bm25sRetriever(articles, tokenize)

    @contextlib.contextmanager
    def plain() -> Iterator[Retriever]:
        yield baseline

    vectors = load_vectors(index_dir)
    assert vectors is not None
    hybrid = Hybrid(vectors, encoder, 0.7, DEPTH)
    settings = RagSettings()
    plain_settings = RagSettings(snippet_document_weight=0.0)
    feedback = RagSettings(query_feedback=True)
    made = {
        "bm25s": lambda: RagSystem(plain, ExtractiveGenerator(), plain_settings),
        "qabench": lambda: RagSystem(whoosh, ExtractiveGenerator(), settings, hybrid=hybrid),
        "+feedback": lambda: RagSystem(whoosh, ExtractiveGenerator(), feedback, hybrid=hybrid),
        "-fusion": lambda: RagSystem(whoosh, ExtractiveGenerator(), settings),
        "-doc-prior": lambda: RagSystem(
            whoosh, ExtractiveGenerator(), plain_settings, hybrid=hybrid
        ),
        "+snippet-dense": lambda: RagSystem(
            whoosh, ExtractiveGenerator(), settings, hybrid=hybrid, dense=encoder
        ),
    }
    return {name: made[name]() for name in configs}


def ask_all(system: RagSystem, questions: list[dict[str, Any]]) -> tuple[list[RagRun], list[float]]:
    runs, millis = [], []
    for question in questions:
        started = time.perf_counter()
        runs.append(system.ask(question["body"], kind=question["type"]))
        millis.append((time.perf_counter() - started) * 1000.0)
    return runs, millis


def scores(gold: Dataset, questions: list[dict[str, Any]], runs: list[RagRun]) -> dict[str, Any]:
    response = {
        "questions": [
            numbered(bioasq_question(r, q["id"])) for q, r in zip(questions, runs, strict=True)
        ]
    }
    parsed = parse_bytes(json.dumps(response).encode(), source="bench")
    result = evaluate_bioasq(gold, parsed)
    values = {(p.experiment_type, m.measure): m.value for p in result.results for m in p.measures}
    return {label: values.get((kind, measure)) for kind, measure, label in COLUMNS}


def numbered(question: dict[str, Any]) -> dict[str, Any]:
    """Name abstract snippets ``sections.0`` as the 2013 gold file does (official matching)."""
    for snippet in question.get("snippets", []):
        if snippet.get("beginSection") == "abstract":
            snippet["beginSection"] = snippet["endSection"] = "sections.0"
    return question


def quality_module(name: str = "rag_quality") -> Any:
    """Load ``bench/<name>.py`` by its path (this directory is kept off ``sys.path``)."""
    if name in sys.modules:
        return sys.modules[name]
    path = Path(__file__).resolve().parent / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def answers_report(data: Path, parts: list[str]) -> dict[str, Any]:
    """Phase B with the baselines, PubMedQA yes/no and the false-claim catch rates."""
    quality = quality_module()
    gold = quality.load_gold(data)
    report: dict[str, Any] = {}
    if "b" in parts:
        runs_all: list[RagRun] = []
        for part in ("tune", "held", "all"):
            started = time.perf_counter()
            ours, runs = quality.phase_b(gold, part)
            ours["ms/question"] = (time.perf_counter() - started) * 1000 / max(1, len(runs))
            report[f"phase B {part}: qabench"] = ours
            report[f"phase B {part}: baselines"] = quality.baselines(gold, part)
            if part == "all":
                runs_all = runs
            print(f"  phase B {part}: {len(runs)} questions", flush=True)
        flagged, checked = quality.own_citations(runs_all)
        report["own citations flagged"] = {"flagged": flagged, "checked": checked}
        report["pubmedqa yes/no"] = quality.pubmedqa_yesno(data)
    if "claims" in parts:
        rates = quality.catch_rates(quality.claim_set(data, gold))
        report["claims"] = {"|".join(k): v for k, v in sorted(rates.items())}
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data"
    )
    parser.add_argument("--parts", default="b,claims,a", help="b (phase B), claims, a (phase A)")
    parser.add_argument(
        "--questions", type=int, default=0, help="phase A: first N distinct questions (0: all)"
    )
    parser.add_argument("--distractors", default="0", help="phase A: distractor multipliers")
    parser.add_argument("--configs", default="bm25s,qabench,+feedback")
    parser.add_argument("--work", type=Path, default=Path("bench-out/rag"))
    parser.add_argument(
        "--embed-all", action="store_true", help="embed every document, not the candidates only"
    )
    parser.add_argument(
        "--held-out",
        type=Path,
        help="folder of the BioASQ 7b-11b golden files (Task{7..11}BGoldenEnriched/), for "
        "the parts heldb (phase B on later years) and abstain (answering and abstaining)",
    )
    parser.add_argument(
        "--abstain-sets",
        default="tune,held",
        help="abstain: which sets to ask (tune, held or both)",
    )
    parser.add_argument(
        "--abstain-stride",
        type=int,
        default=1,
        help="abstain: ask every N-th question of each set (a shorter run)",
    )
    parser.add_argument(
        "--words-only",
        action="store_true",
        help="heldb, abstain: no sentence model (words alone judge and choose sentences)",
    )
    parser.add_argument(
        "--reader",
        type=Path,
        help="heldb: the yes/no reader (qabench train-reader) to read yes/no questions with; "
        "its training sources are printed (a tune year it was trained on is not a tune score)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    parts = args.parts.split(",")
    report: dict[str, Any] = {"answers": answers_report(args.data, parts)}
    if "a" in parts:
        report |= retrieval_report(args)
    if {"heldb", "abstain"} & set(parts):
        if args.held_out is None:
            raise SystemExit("the parts heldb and abstain need --held-out DIR")
        quality, trust = quality_module(), quality_module("rag_trust")
        report["trust"] = {}
        if "heldb" in parts:
            report["trust"] |= trust.held_out_phase_b(
                quality, args.held_out, words_only=args.words_only, reader=args.reader
            )
        if "abstain" in parts:
            report["trust"] |= trust.abstention(
                quality,
                args.data,
                args.held_out,
                args.work,
                words_only=args.words_only,
                parts=tuple(args.abstain_sets.split(",")),
                stride=args.abstain_stride,
            )
    if args.json:
        print(json.dumps(report, indent=2))
        return
    if "trust" in report:
        quality_module("rag_trust").print_trust(report["trust"])
    print_answers(report["answers"])
    if "runs" in report:
        print_table(report)


def retrieval_report(args: argparse.Namespace) -> dict[str, Any]:
    """Phase A: every configuration over the corpus rebuilt from the gold snippets."""
    raw = (args.data / TRAINING).read_bytes()
    distinct: dict[str, dict[str, Any]] = {}
    for q in json.loads(raw)["questions"]:
        distinct.setdefault(q["id"], q)
    questions = sorted(distinct.values(), key=lambda q: q["id"])
    if args.questions:
        questions = questions[: args.questions]
    wanted = {q["id"] for q in questions}
    everything = parse_bytes(raw, source=TRAINING)
    gold = Dataset(
        everything.format, tuple(q for q in everything.by_id().values() if q.id in wanted)
    )
    corpus = list(read_bioasq_snippets(args.data / TRAINING))
    encoder = DenseScorer.load()
    report: dict[str, Any] = {"questions": len(questions), "corpus": len(corpus), "runs": {}}
    for multiplier in [int(m) for m in args.distractors.split(",")]:
        articles = corpus + distractors(args.data, multiplier * len(corpus))
        print(f"corpus {len(corpus)} + {len(articles) - len(corpus)} distractors", flush=True)
        index_dir = build(
            args.work / f"x{multiplier}", articles, encoder, questions, args.embed_all
        )
        for name, system in systems(index_dir, articles, encoder, args.configs.split(",")).items():
            runs, millis = ask_all(system, questions)
            row = scores(gold, questions, runs)
            row["citation support"] = support_rate([r.cited_answer for r in runs])
            row["p50 ms"] = float(np.percentile(millis, 50))
            row["p95 ms"] = float(np.percentile(millis, 95))
            report["runs"][f"{name} x{multiplier}"] = row
            print(
                f"  {name}: " + ", ".join(f"{k} {v:.3f}" for k, v in row.items() if v is not None),
                flush=True,
            )
    return report


def print_answers(answers: dict[str, Any]) -> None:
    """Print the phase B, PubMedQA and false-claim tables."""
    quality = quality_module()
    labels = [label for _, _, label in quality.PHASE_B_COLUMNS]
    rows = [(k, v) for k, v in answers.items() if k.startswith("phase B")]
    if rows:
        print("\nPhase B from gold snippets (BioASQ 2013; tune = batches 0-2, held = batch 3)")
        print(f"| system | {' | '.join(labels)} |")
        print("|" + "---|" * (len(labels) + 1))
        for name, row in rows:
            cells = ["-" if row.get(k) is None else f"{row[k]:.3f}" for k in labels]
            print(f"| {name} | {' | '.join(cells)} |")
        own = answers["own citations flagged"]
        print(f"\nqabench's own cited sentences flagged: {own['flagged']} of {own['checked']}")
        print("\nPubMedQA yes/no (never tuned on):", json.dumps(answers["pubmedqa yes/no"]))
    if "claims" in answers:
        print("\nClaims flagged by the citation check (part | source | kind | flagged | share)")
        for key, (flagged, total) in answers["claims"].items():
            print(f"| {key.replace('|', ' | ')} | {flagged}/{total} | {flagged / total:.2f} |")
        print("\nSummary: false claims caught (number, negation, direction, entity, unrelated;")
        print("entity-within apart) and true claims flagged, per source, both parts")
        for source, row in claim_summary(answers["claims"]).items():
            print(
                f"| {source} | "
                + " | ".join(f"{k} {a}/{b} = {a / b:.2f}" for k, (a, b) in row.items())
                + " |"
            )


def claim_summary(claims: dict[str, tuple[int, int]]) -> dict[str, dict[str, tuple[int, int]]]:
    """Sum the claim counts per source: false claims caught, swapped-within, true flagged."""
    quality = quality_module()
    out: dict[str, dict[str, list[int]]] = {}
    for key, (flagged, total) in claims.items():
        _, source, kind = key.split("|")
        group = (
            "true flagged"
            if kind == "true"
            else "caught"
            if kind in quality.FALSE_KINDS
            else f"{kind} caught"
        )
        for name in (source, "all sources"):
            slot = out.setdefault(name, {}).setdefault(group, [0, 0])
            slot[0] += flagged
            slot[1] += total
    return {s: {k: (a, b) for k, (a, b) in row.items()} for s, row in out.items()}


def print_table(report: dict[str, Any]) -> None:
    print(
        f"\n{report['questions']} BioASQ 2013 questions; corpus of {report['corpus']} gold-snippet abstracts"
    )
    labels = [label for _, _, label in COLUMNS] + ["citation support", "p50 ms", "p95 ms"]
    print(f"| system | {' | '.join(labels)} |")
    print("|" + "---|" * (len(labels) + 1))
    for name, row in report["runs"].items():
        cells = [
            "-" if row[k] is None else f"{row[k]:.3f}" if "ms" not in k else f"{row[k]:.0f}"
            for k in labels
        ]
        print(f"| {name} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
