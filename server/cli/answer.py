"""``qabench answer``: run a built-in system over a dataset and write its answers file.

The file is BioASQ task-b JSON for BioASQ datasets and QALD-JSON otherwise, so it can be scored
with ``qabench evaluate`` and submitted as ``--answers`` to ``qabench experiment run``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evaluators.datasets import library
from evaluators.formats import bioasq_writer, parse_file, qald_json_writer
from evaluators.model import Dataset, Question, SourceFormat
from evaluators.systems.protocol import QASystem
from server.ask.qa_system import RagQASystem, system_registry
from server.ask.service import RagService
from server.cli.context import CliError, Context


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the answer command."""
    ans = sub.add_parser("answer")
    ans.add_argument("--dataset", required=True, help="NAME[@N] of a loaded dataset, or a file")
    ans.add_argument("--builtin", required=True, help="built-in system, e.g. rag or gold")
    ans.add_argument("--language", default="en", help="question language (default en)")
    ans.add_argument("--limit", type=int, help="answer only the first N questions")
    ans.add_argument(
        "--phase",
        choices=("a", "b"),
        default="a",
        help="BioASQ phase: a retrieves (default); b answers from each question's given gold "
        "snippets and writes exact and ideal answers only (--builtin rag)",
    )
    ans.add_argument("-o", "--output", type=Path, help="answers file (default: stdout)")
    ans.set_defaults(func=run)


def _gold(ctx: Context, ref: str) -> tuple[Dataset, str]:
    path = Path(ref)
    if path.is_file():
        return parse_file(path, max_bytes=ctx.config.datasets.max_file_bytes), path.stem
    info = library.resolve_version(ctx.store, ctx.config.base_iri, ref)
    return library.read_dataset(ctx.store, info), info.name


def run(ctx: Context, args: argparse.Namespace) -> int:
    """Answer every question (failures are reported on stderr and left out of the file)."""
    gold, label = _gold(ctx, args.dataset)
    service = RagService(ctx.config)
    try:
        registry = system_registry(service)
        if args.builtin not in registry.names():
            raise CliError(
                f"--builtin {args.builtin!r}: expected one of {', '.join(registry.names())}"
            )
        if args.phase == "b":
            if args.builtin != "rag" or not gold.is_bioasq:
                raise CliError("--phase b answers BioASQ questions with --builtin rag")
            system: QASystem = RagQASystem(service, phase="b")
        else:
            system = registry.create(args.builtin)
        # one answer per id: files with a repeated id (the 2013 BioASQ set has four) keep the first
        questions = list(Dataset(gold.format, gold.questions).by_id().values())
        questions = [q for q in questions if q.text(args.language)]
        if args.limit is not None:
            questions = questions[: args.limit]
        answers: list[Question] = []
        for number, question in enumerate(questions, start=1):
            try:
                reply = system.answer(question, args.language)
                if reply is not None:
                    answers.append(reply)
            except Exception as exc:  # a failing system is a result, not a crash (STYLE §4)
                print(f"question {question.id}: {exc}", file=sys.stderr)
            if sys.stderr.isatty():
                print(f"\r{number}/{len(questions)}", end="", file=sys.stderr)
    finally:
        service.close()
    response = Dataset(gold.format if gold.is_bioasq else SourceFormat.QALD_JSON, tuple(answers))
    data = (
        bioasq_writer.dataset_json(response)
        if gold.is_bioasq
        else qald_json_writer.dataset_json(response, f"{label}-{args.builtin}")
    )
    if args.output:
        args.output.write_bytes(data)
        print(
            f"{len(answers)} of {len(questions)} questions answered -> {args.output}",
            file=sys.stderr,
        )
    else:
        sys.stdout.buffer.write(data + b"\n")
    return 0
