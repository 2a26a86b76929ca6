"""``qabench evaluate``: score an answers file against a dataset, as JSON or a readable table.

The file is replayed through the experiments' own path (``evaluators.experiments.task``), so the
numbers equal those of ``qabench experiment run --answers`` for the same inputs and profile.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from evaluators.datasets.text2sparql import prepare_gold
from evaluators.errors import EvaluationError
from evaluators.evaluate import (
    Evaluation,
    default_language,
    evaluate_replies,
    extra_json,
    official_files,
    read_gold,
    result_json,
)
from evaluators.experiments.plan import read_answers
from evaluators.formats.parsing.source import read_file
from evaluators.formats.sciqa.gold import with_gold
from evaluators.knowledge.endpoint import is_endpoint
from evaluators.knowledge.execution import ExecutionLimits
from evaluators.model import Dataset, SourceFormat
from evaluators.qa.profiles import PROFILES
from evaluators.qa.text2sparql_file import official_names
from evaluators.results import MEASURES, EvaluationResult
from server.cli.context import CliError, Context


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the evaluate command."""
    ev = sub.add_parser(
        "evaluate",
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
    ev.add_argument(
        "--language",
        help="question language (default en; for TEXT2SPARQL data its only language, else "
        "'mul': every question in its own language, as the official evaluation does)",
    )
    ev.add_argument(
        "--gold-results",
        type=Path,
        metavar="RESULT_SET",
        help="TEXT2SPARQL questions file as --dataset: the reference result set as gold; SciQA "
        "questions file: its answers.json or a FIRESPARQL run (the gold results it recorded)",
    )
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
    ev.add_argument(
        "--strict-ids",
        action="store_true",
        default=None,
        help="refuse an answers file with ids the dataset lacks (default: evaluation.strict_ids; "
        "otherwise they are ignored and listed, as in experiments)",
    )
    ev.add_argument(
        "--official-dir",
        type=Path,
        metavar="DIR",
        help="TEXT2SPARQL profiles: also write the official client's files into DIR (2026: "
        "<prefix>_results.json, <prefix>_pred_result_set.json, <prefix>_true_result_set.json; "
        "2025: <prefix>_eval.json, <prefix>_system_result_set.json, ...); existing files are "
        "never overwritten",
    )
    ev.add_argument(
        "--compare-with",
        metavar="NAME@N",
        help="also score the answers against this dataset version (e.g. a corrected one, "
        "`datasets erratum`) and show both side by side with the questions whose score changed",
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


def run(ctx: Context, args: argparse.Namespace) -> int:
    """Evaluate and print; return 1 when a --fail-under threshold is missed (or undefined).

    The answers go through the experiments' path (the same checks of the file, then
    ``ask_questions`` and ``score_replies``), so ``evaluate`` and ``experiment run --answers``
    give the same numbers and treat ids the dataset lacks alike (ignored and listed, or refused
    with ``--strict-ids``). Diagnostics go to
    stderr; with ``--json`` stdout holds exactly one JSON document.
    """
    thresholds = _thresholds(args.fail_under)
    ev = ctx.config.evaluation
    gold, label = read_gold(
        lambda: ctx.store, ctx.config.base_iri, args.dataset, ctx.config.datasets.max_file_bytes
    )
    profile = args.profile or ev.default_profile
    if not gold.is_bioasq and profile not in PROFILES:
        raise CliError(f"--profile {profile!r}: expected one of {', '.join(PROFILES)}")
    kb_spec = args.kb if args.kb is not None else ev.kb
    if gold.format is SourceFormat.SCIQA and args.gold_results is not None:
        data = read_file(args.gold_results, ctx.config.datasets.max_file_bytes)
        gold = with_gold(gold, data, source=args.gold_results.name)
    if gold.format is SourceFormat.TEXT2SPARQL and not any(q.has_answers for q in gold.questions):
        # a questions file has no answers: the result set, or the reference queries, give them
        executor = ctx.executor(kb_spec) if kb_spec and args.gold_results is None else None
        gold = prepare_gold(gold, b"", gold_results=args.gold_results, executor=executor,
                            max_bytes=ctx.config.datasets.max_file_bytes).dataset  # fmt: skip
    settings = Evaluation(
        profile=profile,
        language=args.language or default_language(gold),
        kb=kb_spec or "",
        execute=ev.execute_queries and not args.no_execute,
        limits=ExecutionLimits(
            timeout_seconds=ev.query_timeout_seconds,
            max_rows=ev.query_max_rows,
            max_bytes=ev.max_response_bytes,
        ),
        bootstrap_samples=ev.bootstrap_samples,
        bioasq_version=args.bioasq_version,
        label=label,
        store=None if not kb_spec or is_endpoint(kb_spec) else ctx.store,
        base=ctx.config.base_iri,
        strict_ids=ev.strict_ids if args.strict_ids is None else args.strict_ids,
    )
    if args.official_dir is not None:
        _check_official(args.official_dir, profile, gold)
    answers = read_answers(args.answers, ctx.config.datasets.max_file_bytes)
    evaluated = evaluate_replies(gold, answers, settings, source=args.answers.name)
    result = evaluated.result
    if args.official_dir is not None:
        _write_official(args.official_dir, official_files(evaluated, gold))
    checked = _check_thresholds(result, thresholds)
    missed = [c for c in checked if not c["passed"]]
    other = _compared(ctx, args, settings, answers, result) if args.compare_with else None
    if args.json:
        doc = result_json(result, gold)
        if checked:
            doc["fail_under"] = checked
        if other is not None:
            doc["compared_with"] = other
        if evaluated.extra is not None:
            # execution-based measures, beside the official ones and never in their averages
            doc["extra_measures"] = extra_json(evaluated.extra)
        ctx.emit_json(doc)
    else:
        print_table(result)
        print_diagnostics(result)
        if other is not None:
            print(f"\ncompared with {other['dataset']}: {len(other['changed'])} question(s) "
                  f"score otherwise; {other['results']}")  # fmt: skip
    for c in missed:
        shown = "undefined" if c["value"] is None else f"{c['value']:.4f}"
        print(f"qabench: {c['measure']} = {shown} < {c['threshold']}", file=sys.stderr)
    return 1 if missed else 0


def _compared(
    ctx: Context,
    args: argparse.Namespace,
    settings: Evaluation,
    answers: bytes,
    result: EvaluationResult,
) -> dict[str, Any]:
    """Score the same answers against ``--compare-with`` and say which questions moved."""
    gold, label = read_gold(
        lambda: ctx.store, ctx.config.base_iri, args.compare_with,
        ctx.config.datasets.max_file_bytes,
    )  # fmt: skip
    second = evaluate_replies(gold, answers, replace(settings, label=label),
                              source=args.answers.name).result  # fmt: skip
    doc = result_json(second, gold)
    before = _headlines(result)
    after = _headlines(second)
    changed = [
        {"question": q, "value": before.get(q), "compared": after.get(q)}
        for q in dict.fromkeys([*before, *after])
        if before.get(q) != after.get(q)
    ]
    return {"dataset": label, "results": doc["results"], "changed": changed}


def _headlines(result: EvaluationResult) -> dict[str, float | None]:
    """Return each question's headline value (set_f_ndcg for TEXT2SPARQL, else f1)."""
    scored = result.get("QA") or (result.results[0] if result.results else None)
    if scored is None:
        return {}
    return {
        s.question_id: next(
            (m.value for m in s.measures if m.measure in ("set_f_ndcg", "f1")), None
        )
        for s in scored.per_question
    }


def _check_official(directory: Path, profile: str, gold: Dataset) -> None:
    """Refuse ``--official-dir`` before scoring: another profile, or a file already there."""
    rules = PROFILES.get(profile)
    if rules is None or not rules.is_text2sparql:
        raise CliError("--official-dir is for the TEXT2SPARQL profiles (text2sparql, "
                       "text2sparql-2026, text2sparql-corrected)")  # fmt: skip
    names = official_names(profile, gold.source_id or "dataset")
    for name in (names.evaluation, names.system_result_set, names.true_result_set):
        if (directory / name).exists():
            raise CliError(f"--official-dir: {directory / name} exists; the official files "
                           "are never overwritten (choose another directory)")  # fmt: skip


def _write_official(directory: Path, files: dict[str, dict[str, object]]) -> None:
    """Write the official files (``_check_official`` ran before scoring)."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, doc in files.items():
        # the client writes json.dump(doc, indent=2) (ASCII escapes)
        (directory / name).write_text(json.dumps(doc, indent=2), encoding="utf-8")
        print(f"qabench: wrote {directory / name}", file=sys.stderr)


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
        shown = ", ".join(repr(i) for i in result.unknown_ids[:20])
        more = " …" if len(result.unknown_ids) > 20 else ""
        print(
            f"qabench: warning: {len(result.unknown_ids)} answer id(s) not in the dataset were "
            f"ignored: {shown}{more} (--strict-ids refuses them)",
            file=sys.stderr,
        )
    for note in result.notes:
        print(f"qabench: note: {note}", file=sys.stderr)
