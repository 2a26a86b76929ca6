"""``qabench ask "QUESTION"``: answer a question with the built-in RAG system in a terminal.

Thin: builds a ``RagService`` from the configuration (the index in ``Config.index_dir``, so the
global ``--data-dir`` applies), runs the pipeline, stores the run's provenance in the rag graph,
and prints the answers (or one JSON document with ``--json``). When the store is held by a
running server the answer is still printed and the run is reported as not stored.
"""

from __future__ import annotations

import argparse
import sys

from rag.models.generators import GENERATOR_NAMES
from rag.run import RagRun
from server.ask.payloads import run_json
from server.ask.service import RagService, UnknownGeneratorError
from server.ask.view import evidence_check
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
