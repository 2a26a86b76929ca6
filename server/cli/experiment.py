"""``qabench experiment ...``: run, resume, show, list, publish experiments and record reruns.

Prints the experiment id as soon as it is stored, a progress bar on a terminal only, then the
summary (``--json``: the document of ``evaluators.experiments.read.summary_json``). The runner
comes from ``server.runner.build_runner``, the same wiring the web application uses.
"""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from evaluators.datasets import library
from evaluators.experiments.answers import text2sparql_answers
from evaluators.experiments.model import AskingUnit, TaskStatus
from evaluators.experiments.read import (
    ExperimentSummary,
    list_experiments,
    summary_json,
    system_descriptions,
)
from evaluators.experiments.results import text2sparql_eval
from evaluators.experiments.runner import (
    ExperimentRequest,
    ExperimentRunner,
    ProgressEvent,
    SystemRequest,
    recover_interrupted,
)
from evaluators.formats.mirage.predictions import is_predictions_path
from evaluators.model import ALL_LANGUAGES, Dataset, SourceFormat
from evaluators.qa.profiles import PROFILES
from evaluators.reports.experiment import experiment_report, report_json, report_tables
from evaluators.reports.render import to_csv_many, to_latex, to_markdown
from evaluators.results import MEASURES
from evaluators.systems.protocol import SystemKind
from server.challenge.reruns import rerun_pairs, rerun_quads
from server.cli.context import CliError, Context
from server.runner import build_runner

REPORT_FORMATS = ("latex", "csv", "markdown", "text2sparql-answers")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the experiment command group."""
    exp = sub.add_parser("experiment")
    act = exp.add_subparsers(dest="experiment_command", metavar="ACTION")
    act.required = True

    run = act.add_parser("run", help="submit and run an experiment; prints its id")
    run.add_argument(
        "--dataset",
        action="append",
        required=True,
        metavar="NAME",
        help="dataset NAME, NAME@N or version IRI (repeatable)",
    )
    run.add_argument(
        "--system",
        action="append",
        default=[],
        metavar="NAME=URL",
        help="a web service speaking the GERBIL QA protocol (repeatable)",
    )
    run.add_argument(
        "--text2sparql",
        action="append",
        default=[],
        metavar="NAME=URL",
        help="a system speaking the TEXT2SPARQL API (GET ?dataset=&question=, answers one SPARQL "
        "query, run on --kb) (repeatable)",
    )
    run.add_argument(
        "--answers",
        action="append",
        default=[],
        metavar="[NAME=]FILE[@DATASET]",
        help="an answers file (QALD-JSON, QALD-XML, eQALD, answers-json/tsv, or the TEXT2SPARQL "
        "client's answers or result set) (repeatable)",
    )
    run.add_argument(
        "--builtin",
        action="append",
        default=[],
        metavar="NAME",
        help="a built-in system, e.g. gold (repeatable)",
    )
    run.add_argument(
        "--language",
        action="append",
        metavar="CODE",
        help="question language (repeatable; default en, for TEXT2SPARQL data its only language "
        "or 'mul': every question in its own language, scored together)",
    )
    run.add_argument(
        "--profile",
        action="append",
        metavar="P",
        help="scoring profile (repeatable; default evaluation.default_profile)",
    )
    run.add_argument("--publish", action="store_true", help="make the experiment public at once")
    run.add_argument("--kb", metavar="NAME|URL", help=KB_HELP)
    run.add_argument("--strict-ids", action="store_true", default=None, help=STRICT_IDS_HELP)
    run.add_argument("--no-execute", action="store_true", help=NO_EXECUTE_HELP)
    run.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    run.set_defaults(func=run_run)

    resume = act.add_parser("resume", help="finish the interrupted tasks of an experiment")
    resume.add_argument("id")
    resume.add_argument(
        "--kb",
        metavar="NAME|URL",
        help="the experiment's knowledge base again, e.g. its endpoint URL with credentials",
    )
    resume.add_argument("--no-execute", action="store_true", help=NO_EXECUTE_HELP)
    resume.add_argument(
        "--system",
        action="append",
        default=[],
        metavar="NAME=URL",
        help="call a recorded web service at this URL (e.g. with credentials)",
    )
    resume.add_argument(
        "--text2sparql",
        action="append",
        default=[],
        metavar="NAME=URL",
        help="call a recorded TEXT2SPARQL system at this URL (e.g. with credentials)",
    )
    resume.add_argument(
        "--answers",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="read a recorded answers file from this path",
    )
    resume.add_argument("--json", action="store_true")
    resume.set_defaults(func=run_resume)

    show = act.add_parser(
        "show",
        help="show an experiment's tasks and results, or its report tables",
        description="Without options: one line per task. --json: the summary with its reports "
        "(per-language summary, systems x datasets matrices, significance). --format: the "
        "report tables as CSV, Markdown or LaTeX (booktabs) for papers.",
    )
    show.add_argument("id")
    show.add_argument("--json", action="store_true")
    show.add_argument(
        "--format",
        choices=REPORT_FORMATS,
        help="print the report tables in this format (LaTeX needs \\usepackage{booktabs})",
    )
    show.add_argument(
        "--system",
        metavar="NAME",
        help="--format text2sparql-answers: whose answers (when the experiment has several)",
    )
    show.add_argument(
        "--measure",
        help="fill the summaries with this measure id instead of each profile's headline",
    )
    show.set_defaults(func=run_show)

    lst = act.add_parser("list", help="list experiments")
    lst.add_argument("--json", action="store_true")
    lst.set_defaults(func=run_list)

    pub = act.add_parser("publish", help="make an experiment public and citable")
    pub.add_argument("id")
    pub.add_argument("--json", action="store_true")
    pub.set_defaults(func=run_publish)

    rerun = act.add_parser(
        "rerun", help="record that an experiment's tasks rerun an earlier one's (which counts)"
    )
    rerun.add_argument("id", help="the later experiment (its tasks count)")
    rerun.add_argument("--of", required=True, metavar="ID", help="the earlier experiment")
    rerun.add_argument("--reason", default="", help="why the system was run again")
    rerun.add_argument("--json", action="store_true")
    rerun.set_defaults(func=run_rerun)


# ---------------------------------------------------------------------------- argument parsing


def _split_name(value: str, option: str) -> tuple[str | None, str]:
    name, sep, rest = value.partition("=")
    if sep and name and "/" not in name:
        return name, rest
    if option in ("--system", "--text2sparql"):
        raise CliError(f"{option} expects NAME=URL, got {value!r}")
    return None, value


def web_systems(
    values: list[str], kind: SystemKind = SystemKind.WEB_SERVICE
) -> list[SystemRequest]:
    """Parse ``--system NAME=URL`` (or ``--text2sparql NAME=URL``) options.

    Raises:
        CliError: if a value has no name.
    """
    option = "--text2sparql" if kind is SystemKind.TEXT2SPARQL else "--system"
    out = []
    for value in values:
        name, url = _split_name(value, option)
        out.append(SystemRequest(name or url, kind, url=url))
    return out


def _readable(path: Path) -> bool:
    # a file, or MIRAGE's prediction files (a folder, or a path with {dataset})
    return path.is_file() or is_predictions_path(path)


def answer_systems(values: list[str]) -> list[SystemRequest]:
    """Parse ``--answers [NAME=]FILE[@DATASET]`` options.

    Raises:
        CliError: if a file does not exist.
    """
    out = []
    for value in values:
        name, rest = _split_name(value, "--answers")
        path, dataset = Path(rest), None
        if not _readable(path) and "@" in rest:
            head, _, tail = rest.rpartition("@")
            path, dataset = Path(head), tail
        if not _readable(path):
            raise CliError(f"--answers: no such file {str(path)!r}")
        out.append(
            SystemRequest(
                name or path.stem,
                SystemKind.ANSWER_FILE,
                answers_path=path,
                answers_dataset=dataset,
            )
        )
    return out


# ---------------------------------------------------------------------------- commands


NO_EXECUTE_HELP = (
    "score SPARQL-only answers (a query, no answers) as empty instead of running their query "
    "on the knowledge base (--kb / evaluation.kb)"
)
STRICT_IDS_HELP = (
    "refuse an answers file with ids its dataset lacks (default: evaluation.strict_ids, else "
    "they are ignored and listed)"
)
KB_HELP = (
    "knowledge base for owl:sameAs and label lookups and for running SPARQL-only answers: a "
    "loaded KB name or a SPARQL endpoint URL (default: evaluation.kb)"
)


def _runner(ctx: Context, *, execute: bool = True) -> ExperimentRunner:
    config = ctx.config
    if not execute:
        config = replace(config, evaluation=replace(config.evaluation, execute_queries=False))
    runner = build_runner(config, ctx.store)
    recover_interrupted(ctx.store, ctx.config.base_iri)
    return runner


class _Bar:
    """A progress bar on stderr, only when stderr is a terminal."""

    def __init__(self) -> None:
        self._bar: Any = None
        if sys.stderr.isatty():
            from tqdm import tqdm

            self._bar = tqdm(total=0, unit="q", file=sys.stderr, leave=False)
        self._seen: dict[int, int] = {}

    def __call__(self, event: ProgressEvent) -> None:
        if self._bar is None:
            return
        if event.task not in self._seen:
            self._bar.total += event.total
            self._seen[event.task] = 0
        self._bar.update(max(0, event.done - self._seen[event.task]))
        self._seen[event.task] = max(self._seen[event.task], event.done)
        self._bar.set_description(f"task {event.task}")

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def _report(ctx: Context, summary: ExperimentSummary, as_json: bool) -> None:
    if as_json:
        ctx.emit_json(_with_text2sparql_eval(ctx, summary, summary_json(summary)))
        return
    print(
        f"experiment {summary.id}  {summary.iri}  {'published' if summary.published else 'private'}"
    )
    for task in summary.tasks:
        qa = next((r for r in task.results if r.experiment_type == "QA"), None)
        scores = ""
        if qa is not None:
            parts = [
                f"{m}={qa.value(m):.4f}"
                for m in ("macro_f1", "micro_f1", "macro_f1_qald")
                if qa.value(m) is not None
            ]
            scores = "".join(" " + p for p in parts)
        plan = task.plan
        print(
            f"  {plan.number:>3} {plan.system} | {plan.dataset}@{plan.version} | "
            f"{plan.language} | {plan.profile} | {task.status.value} "
            f"errors={task.errors if task.errors is not None else '-'}{scores}"
        )
        if task.message and task.status is not TaskStatus.FINISHED:
            print(f"      {task.message}")


def _with_text2sparql_eval(
    ctx: Context, summary: ExperimentSummary, doc: dict[str, Any]
) -> dict[str, Any]:
    """Add ``text2sparql_eval`` (the official file's shape) to each finished TEXT2SPARQL task."""
    golds: dict[tuple[str, int], Dataset] = {}
    for task, entry in zip(summary.tasks, doc["tasks"], strict=True):
        plan = task.plan
        rules = PROFILES.get(plan.profile)
        if rules is None or not rules.is_text2sparql or task.status is not TaskStatus.FINISHED:
            continue
        key = (plan.dataset, plan.version)
        if key not in golds:
            info = library.version_info(ctx.store, ctx.config.base_iri, *key)
            golds[key] = library.read_dataset(ctx.store, info)
        entry["text2sparql_eval"] = text2sparql_eval(
            ctx.store, ctx.config.base_iri, summary.id, task.iri, golds[key], plan.profile
        )
    return doc


def _text2sparql_answers(
    ctx: Context, summary: ExperimentSummary, system: str | None
) -> list[dict[str, str]]:
    """Return one system's answers to the experiment's TEXT2SPARQL questions, client-shaped.

    Raises:
        CliError: if the experiment has no TEXT2SPARQL answers, or several systems and none
            was named.
    """
    base = ctx.config.base_iri
    units: dict[AskingUnit, None] = {}
    golds: dict[tuple[str, int], Dataset] = {}
    for task in summary.tasks:
        plan = task.plan
        key = (plan.dataset, plan.version)
        if key not in golds:
            info = library.version_info(ctx.store, base, *key)
            golds[key] = library.read_dataset(ctx.store, info)
        if golds[key].format is SourceFormat.TEXT2SPARQL:
            units.setdefault(AskingUnit.of(plan))
    systems = sorted({u.system for u in units})
    if not systems:
        raise CliError(f"experiment {summary.id} asked no TEXT2SPARQL questions")
    chosen = system or (systems[0] if len(systems) == 1 else None)
    if chosen not in systems:
        raise CliError(
            f"say whose answers to write with --system NAME; systems: {', '.join(systems)}"
        )
    described = system_descriptions(ctx.store, base, summary.id).get(chosen)
    endpoint = described.url if described is not None and described.url else ""
    chosen_units = [u for u in units if u.system == chosen]
    return text2sparql_answers(ctx.store, base, summary.id, chosen_units, golds, endpoint)


def _default_language(ctx: Context, datasets: list[str]) -> str:
    """English, unless every dataset is TEXT2SPARQL data: then its one language, or ``mul``."""
    versions = [library.resolve_version(ctx.store, ctx.config.base_iri, d) for d in datasets]
    if not versions or any(v.format != SourceFormat.TEXT2SPARQL.value for v in versions):
        return "en"
    languages = {lang for v in versions for lang in v.languages}
    return languages.pop() if len(languages) == 1 else ALL_LANGUAGES


def run_run(ctx: Context, args: argparse.Namespace) -> int:
    """Submit an experiment, run it, print its id and summary."""
    systems = web_systems(args.system) + web_systems(args.text2sparql, SystemKind.TEXT2SPARQL)
    systems += answer_systems(args.answers)
    systems += [SystemRequest(n, SystemKind.BUILT_IN, builtin=n) for n in args.builtin]
    try:
        owner = getpass.getuser()
    except (KeyError, OSError):
        owner = ""
    request = ExperimentRequest(
        systems=tuple(systems),
        datasets=tuple(args.dataset),
        languages=tuple(args.language or [_default_language(ctx, args.dataset)]),
        profiles=tuple(args.profile or [ctx.config.evaluation.default_profile]),
        owner=owner,
        publish=args.publish,
        kb=args.kb,
        strict_ids=args.strict_ids,
    )
    runner = _runner(ctx, execute=not args.no_execute)
    submission = runner.submit(request)
    # The token is shown (and kept in a file only its owner can read) before the first question
    # is asked: an interrupted run must not lose it.
    token_file = write_token(ctx.config.data_dir, submission.id, submission.token)
    if args.json:
        print(f"qabench: access token written to {token_file}", file=sys.stderr, flush=True)
    else:
        print(submission.id, flush=True)
        print(
            f"access token (shown once; needed to view the private experiment; kept in "
            f"{token_file}): {submission.token}",
            flush=True,
        )
    for warning in submission.warnings:
        print(f"qabench: warning: {warning}", file=sys.stderr, flush=True)
    bar = _Bar()
    try:
        summary = runner.run(submission.id, progress=bar)
    finally:
        bar.close()
    summary = replace(summary, token=submission.token)
    _report(ctx, summary, args.json)
    return 0


def write_token(data_dir: Path, experiment_id: str, token: str) -> Path:
    """Write an experiment's access token to ``<data dir>/tokens/<id>.token``, mode 0600.

    The directory is created with mode 0700; the file is created with its final mode (never
    readable by others, not even for a moment).
    """
    folder = data_dir / "tokens"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = folder / f"{experiment_id}.token"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(token + "\n")
    os.chmod(path, 0o600)
    return path


def run_resume(ctx: Context, args: argparse.Namespace) -> int:
    """Finish the interrupted tasks of an experiment."""
    requests = web_systems(args.system) + web_systems(args.text2sparql, SystemKind.TEXT2SPARQL)
    overrides = {s.name: s for s in requests + answer_systems(args.answers)}
    runner = _runner(ctx, execute=not args.no_execute)
    bar = _Bar()
    try:
        summary = runner.resume(args.id, progress=bar, overrides=overrides, kb=args.kb)
    finally:
        bar.close()
    _report(ctx, summary, args.json)
    return 0


def run_show(ctx: Context, args: argparse.Namespace) -> int:
    """Show one experiment: its tasks, its JSON document with reports, or report tables."""
    summary = _runner(ctx).summary(args.id)
    if not args.json and not args.format:
        _report(ctx, summary, False)
        return 0
    if args.measure is not None and args.measure not in MEASURES:
        raise CliError(
            f"--measure {args.measure!r}: unknown measure; known: {', '.join(sorted(MEASURES))}"
        )
    if args.format == "text2sparql-answers":
        ctx.emit_json(_text2sparql_answers(ctx, summary, args.system))
        return 0
    report = experiment_report(ctx.store, ctx.config.base_iri, args.id, measure=args.measure)
    if args.json:
        ctx.emit_json({**summary_json(summary), "reports": report_json(report)})
        return 0
    tables = report_tables(report)
    if args.format == "csv":
        sys.stdout.write(to_csv_many(tables))
    elif args.format == "markdown":
        sys.stdout.write(to_markdown(tables))
    else:
        sys.stdout.write(to_latex(tables))
    return 0


def run_list(ctx: Context, args: argparse.Namespace) -> int:
    """List experiments (private ones too: the local operator sees everything)."""
    _runner(ctx)
    items = list_experiments(ctx.store, ctx.config.base_iri)
    if args.json:
        ctx.emit_json([{"id": i.id, "iri": i.iri, "published": i.published} for i in items])
        return 0
    for item in items:
        print(f"{item.id}  {'published' if item.published else 'private  '}  {item.iri}")
    return 0


def run_publish(ctx: Context, args: argparse.Namespace) -> int:
    """Publish an experiment."""
    item = _runner(ctx).publish(args.id)
    if args.json:
        ctx.emit_json({"id": item.id, "iri": item.iri, "published": item.published})
    else:
        print(f"{item.id} published: {item.iri}")
    return 0


def run_rerun(ctx: Context, args: argparse.Namespace) -> int:
    """Record that ``id``'s tasks rerun those of ``--of`` (``server.challenge.reruns``); print
    the pairs. Only the later experiment's graph changes."""
    if args.id == args.of:
        raise CliError("an experiment cannot rerun itself")
    base = ctx.config.base_iri
    runner = _runner(ctx)
    new, old = runner.summary(args.id), runner.summary(args.of)
    pairs = rerun_pairs([(t.iri, t.plan) for t in new.tasks], [(t.iri, t.plan) for t in old.tasks])
    ctx.store.add(rerun_quads(base, args.id, pairs, args.reason))
    if args.json:
        ctx.emit_json(
            {
                "experiment": new.iri,
                "rerun_of": old.iri,
                "reason": args.reason,
                "reruns": [
                    {
                        "task": p.new,
                        "rerun_of": p.old,
                        "system": p.plan.system,
                        "dataset": p.plan.dataset,
                        "language": p.plan.language,
                    }
                    for p in pairs
                ],
            }
        )
    else:
        for p in pairs:
            print(f"{p.new} reruns {p.old} ({p.plan.system}, {p.plan.dataset}); the rerun counts")
    return 0
