"""``qabench evaluate``: score an answers file against a dataset, as JSON or a readable table.

The file is replayed through the experiments' own path (``evaluators.experiments.task``), so the
numbers equal those of ``qabench experiment run --answers`` for the same inputs and profile.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import replace
from pathlib import Path

from evaluators.datasets import library
from evaluators.errors import EvaluationError
from evaluators.experiments.plan import read_answers
from evaluators.experiments.task import (
    AskSettings,
    Reply,
    ScoreSettings,
    ask_questions,
    executing,
    score_replies,
)
from evaluators.formats import parse_file
from evaluators.knowledge.bases import open_kb
from evaluators.knowledge.execution import (
    EndpointExecutor,
    ExecutionLimits,
    QueryExecutor,
    open_executor,
)
from evaluators.model import Dataset
from evaluators.qa.profiles import PROFILES
from evaluators.results import BIOASQ_PROFILE, MEASURES, EvaluationResult, to_json
from evaluators.systems.answer_files import AnswerFileSystem, parse_answer_file
from evaluators.systems.protocol import RequestGate, public_url
from server.cli.context import CliError, Context
from store.protocol import RdfStore


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the evaluate command."""
    ev = sub.add_parser(
        "evaluate",
        help="score an answers file against a dataset",
        description="Score QALD-JSON, QALD-XML or extended QALD answers (or a BioASQ response) "
        "against a loaded dataset or a dataset file.",
    )
    ev.add_argument("--dataset", required=True, help="NAME[@N] of a loaded dataset, or a file")
    ev.add_argument("--answers", required=True, type=Path, help="the system's answers file")
    ev.add_argument(
        "--profile",
        help=f"scoring profile: {', '.join(PROFILES)} (QA); "
        "BioASQ data is always scored with the official 'bioasq' rules",
    )
    ev.add_argument("--language", default="en", help="question language (default en)")
    ev.add_argument(
        "--kb",
        help="knowledge base for sameAs/label lookups: a loaded KB name or "
        "a SPARQL endpoint URL (default: evaluation.kb)",
    )
    ev.add_argument(
        "--bioasq-version",
        type=int,
        default=8,
        choices=[2, 3, 5, 8, 9],
        help="BioASQ evaluator version (MAP denominator), default 8",
    )
    ev.add_argument(
        "--no-execute",
        action="store_true",
        help="score SPARQL-only answers (a query, no answers) as empty instead of running "
        "their query on the knowledge base (--kb / evaluation.kb)",
    )
    ev.add_argument("--json", action="store_true", help="print one JSON document")
    ev.add_argument(
        "--fail-under",
        action="append",
        default=[],
        metavar="MEASURE=VALUE",
        help="exit with status 1 if MEASURE (e.g. micro_f1, C2KB.macro_f1, documents.map) is "
        "below VALUE or undefined; repeatable",
    )
    ev.set_defaults(func=run)


def _gold(ctx: Context, ref: str) -> tuple[Dataset, str]:
    path = Path(ref)
    if path.is_file():
        return parse_file(path, max_bytes=ctx.config.datasets.max_file_bytes), path.stem
    info = library.resolve_version(ctx.store, ctx.config.base_iri, ref)
    return library.read_dataset(ctx.store, info), f"{info.name}/v{info.version}"


def _thresholds(specs: list[str]) -> list[tuple[str | None, str, float]]:
    out: list[tuple[str | None, str, float]] = []
    for spec in specs:
        name, sep, value = spec.partition("=")
        if not sep:
            raise CliError(f"--fail-under {spec!r}: expected MEASURE=VALUE, e.g. micro_f1=0.5")
        kind, dot, measure = name.strip().rpartition(".")
        if measure not in MEASURES:
            raise CliError(
                f"--fail-under {spec!r}: unknown measure {measure!r}; known: "
                f"{', '.join(sorted(MEASURES))}"
            )
        try:
            out.append((kind if dot else None, measure, float(value)))
        except ValueError:
            raise CliError(f"--fail-under {spec!r}: {value!r} is not a number") from None
    return out


def _replies(
    ctx: Context, gold: Dataset, path: Path, language: str, executor: QueryExecutor | None
) -> dict[str, Reply]:
    """Replay the answers file through the experiments' asking path (no clock).

    With an executor, SPARQL-only answers are run on its knowledge base first.
    """
    data = read_answers(path, ctx.config.datasets.max_file_bytes)
    parsed = parse_answer_file(data, source=path.name, bioasq=gold.is_bioasq)
    system = AnswerFileSystem(parsed.by_id())
    settings = AskSettings(language=language, error_tolerance=1.0, concurrency=1, timed=False)
    complete = executing(executor) if executor is not None else None
    outcome = ask_questions(gold, system, RequestGate(1), settings, complete=complete)
    return outcome.replies


def _executor(ctx: Context, kb_spec: str, store: RdfStore | None) -> QueryExecutor:
    ev = ctx.config.evaluation
    limits = ExecutionLimits(
        timeout_seconds=ev.query_timeout_seconds,
        max_rows=ev.query_max_rows,
        max_bytes=ev.max_response_bytes,
    )
    executor = open_executor(store, ctx.config.base_iri, kb_spec, limits)
    if isinstance(executor, EndpointExecutor):
        executor.description = public_url(kb_spec)
    return executor


def _unknown_ids(ctx: Context, gold: Dataset, path: Path) -> tuple[str, ...]:
    data = read_answers(path, ctx.config.datasets.max_file_bytes)
    parsed = parse_answer_file(data, source=path.name, bioasq=gold.is_bioasq)
    known = {q.id for q in gold.questions}
    return tuple(dict.fromkeys(q.id for q in parsed.questions if q.id not in known))


def run(ctx: Context, args: argparse.Namespace) -> int:
    """Evaluate and print; return 1 when a --fail-under threshold is missed (or undefined).

    The answers go through the experiments' path (``ask_questions`` then ``score_replies``), so
    ``evaluate`` and ``experiment run --answers`` give the same numbers. Diagnostics go to
    stderr; with ``--json`` stdout holds exactly one JSON document.
    """
    thresholds = _thresholds(args.fail_under)
    gold, label = _gold(ctx, args.dataset)
    if gold.is_bioasq:
        profile = BIOASQ_PROFILE
    else:
        profile = args.profile or ctx.config.evaluation.default_profile
        if profile not in PROFILES:
            raise CliError(f"--profile {profile!r}: expected one of {', '.join(PROFILES)}")
    kb = None
    executor = None
    kb_spec = args.kb if args.kb is not None else ctx.config.evaluation.kb
    if kb_spec and not gold.is_bioasq:
        store = None if kb_spec.startswith(("http://", "https://")) else ctx.store
        kb = open_kb(store, ctx.config.base_iri, kb_spec)
        if ctx.config.evaluation.execute_queries and not args.no_execute:
            executor = _executor(ctx, kb_spec, store)
    replies = _replies(ctx, gold, args.answers, args.language, executor)
    settings = ScoreSettings(
        profile=profile,
        language=args.language,
        dataset_label=label,
        kb=kb,
        bootstrap_samples=ctx.config.evaluation.bootstrap_samples,
        bioasq_version=args.bioasq_version,
    )
    result = score_replies(gold, replies, settings)
    result = _with_execution_notes(result, replies)
    unknown = _unknown_ids(ctx, gold, args.answers)
    if unknown and not gold.is_bioasq:
        result = replace(result, unknown_ids=unknown)
    checked = _check_thresholds(result, thresholds)
    missed = [c for c in checked if not c["passed"]]
    if args.json:
        doc = to_json(result)
        if checked:
            doc["fail_under"] = checked
        ctx.emit_json(doc)
    else:
        print_table(result)
        print_diagnostics(result)
    for c in missed:
        shown = "undefined" if c["value"] is None else f"{c['value']:.4f}"
        print(f"qabench: {c['measure']} = {shown} < {c['threshold']}", file=sys.stderr)
    return 1 if missed else 0


def _with_execution_notes(result: EvaluationResult, replies: dict[str, Reply]) -> EvaluationResult:
    """Add to the notes how many SPARQL-only answers were run, and what went wrong."""
    ran = [r for r in replies.values() if r.executed is not None]
    if not ran:
        return result
    failed = [r for r in ran if r.execution_problem is not None]
    notes = [
        f"{len(ran)} SPARQL-only answer(s) scored on the results of their query, run on "
        f"{ran[0].executed}"
    ]
    for r in failed[:20]:
        notes.append(f"question {r.question_id}: {r.execution_problem}")
    return replace(result, notes=(*result.notes, *notes))


def _check_thresholds(
    result: EvaluationResult, thresholds: list[tuple[str | None, str, float]]
) -> list[dict[str, object]]:
    """Return one entry per threshold: the measure, its value, the threshold, passed or not.

    An undefined value never passes.

    Raises:
        EvaluationError: if a threshold names an experiment type the result does not have.
    """
    checked: list[dict[str, object]] = []
    for kind, measure, floor in thresholds:
        target = result.get(kind) if kind else (result.get("QA") or result.results[0])
        if target is None:
            raise EvaluationError(f"--fail-under: no {kind!r} results in this evaluation")
        value = target.value(measure)
        defined = value is not None and not math.isnan(value)
        checked.append(
            {
                "measure": f"{target.experiment_type}.{measure}",
                "value": value if defined else None,
                "threshold": floor,
                "passed": defined and value is not None and value >= floor,
            }
        )
    return checked


def print_table(result: EvaluationResult) -> None:
    """Print the results as a readable table, one row per experiment type."""
    print(
        f"dataset {result.dataset}, profile {result.profile}, language {result.language}, "
        f"{result.questions} questions"
    )
    for r in result.results:
        print(f"\n{r.experiment_type}")
        for m in r.measures:
            info = MEASURES[m.measure]
            if m.value is None:
                shown = f"undefined ({m.undefined_reason})"
            elif info.is_count:
                shown = str(int(m.value))
            else:
                shown = f"{m.value:.4f}"
            print(f"  {info.label:34} {shown}")


def print_diagnostics(result: EvaluationResult) -> None:
    """Print what the reader should know about the inputs (on stderr, never mixed with results)."""
    if result.unknown_ids:
        ids = ", ".join(result.unknown_ids[:20])
        print(
            f"qabench: warning: {len(result.unknown_ids)} answer ids match no question: {ids}",
            file=sys.stderr,
        )
    for note in result.notes:
        print(f"qabench: note: {note}", file=sys.stderr)
