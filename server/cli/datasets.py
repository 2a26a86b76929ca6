"""``qabench datasets ...``: load, list, show, fetch, check and refresh benchmark datasets."""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from evaluators.datasets import catalog, errata, library
from evaluators.datasets.checks import CheckReport, check_dataset
from evaluators.datasets.sciqa import load_sciqa
from evaluators.datasets.text2sparql import load_text2sparql, prepare_gold
from evaluators.formats import parse_file
from evaluators.formats.mirage.build import build_benchmark
from evaluators.formats.parsing.source import read_file
from evaluators.formats.qald_json_writer import dataset_json
from evaluators.formats.text2sparql.questions import looks_like_questions
from evaluators.knowledge.bases import refresh_answers
from evaluators.knowledge.endpoint import is_endpoint
from evaluators.knowledge.reference import engine_differences
from evaluators.model import SourceFormat
from server.cli.context import CliError, Context

FORMATS = [f.value for f in SourceFormat if not f.answers_only]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the datasets command group."""
    ds = sub.add_parser("datasets")
    act = ds.add_subparsers(dest="datasets_command", metavar="ACTION")
    act.required = True

    load = act.add_parser("load", help="load a benchmark file as a new dataset version")
    load.add_argument(
        "path",
        type=Path,
        help="the benchmark file (or MIRAGE's rawdata/ folder: benchmark.json is built from it)",
    )
    load.add_argument(
        "--name",
        help="dataset name (default: the file's own id, e.g. QALD's dataset.id, else its name)",
    )
    load.add_argument(
        "--new-version",
        action="store_true",
        help="store different content under an existing name as its next version",
    )
    load.add_argument("--format", choices=FORMATS, help="force a format instead of detecting it")
    load.add_argument(
        "--kb",
        help="knowledge base the gold answers refer to (e.g. dbpedia-2016-10); for a TEXT2SPARQL "
        "questions file a loaded KB name or an endpoint URL the reference queries are run on "
        "(the gold answers, or with --gold-results the engine differences)",
    )
    load.add_argument(
        "--gold-results",
        type=Path,
        metavar="RESULT_SET",
        help="TEXT2SPARQL: the reference result set (qname -> {value: relevance}) as gold "
        "answers; SciQA: its answers.json, or a FIRESPARQL run (the gold results it recorded)",
    )
    load.add_argument("--title", help="human-readable title")
    load.add_argument(
        "--license",
        type=_licence_iri,
        help="IRI of the file's licence, published as dct:license (default: qab:SourceLicense, "
        "the terms of the file's source)",
    )
    load.add_argument("--json", action="store_true", help="print one JSON object")
    load.set_defaults(func=run_load)

    lst = act.add_parser("list", help="list loaded dataset versions")
    lst.add_argument("--json", action="store_true")
    lst.set_defaults(func=run_list)

    show = act.add_parser("show", help="show one dataset's versions and metadata")
    show.add_argument("name", help="NAME, NAME@N or a version IRI")
    show.add_argument("--json", action="store_true")
    show.set_defaults(func=run_show)

    cat = act.add_parser("catalog", help="list the built-in catalog of well-known datasets")
    cat.add_argument("--json", action="store_true")
    cat.set_defaults(func=run_catalog)

    fetch = act.add_parser("fetch", help="download a catalog dataset, verify and load it")
    fetch.add_argument("names", nargs="+", metavar="NAME")
    fetch.add_argument("--no-verify", action="store_true", help="load even if the checksum differs")
    fetch.add_argument("--mirror", help="base URL or directory (overrides datasets.mirror)")
    fetch.add_argument("--json", action="store_true")
    fetch.set_defaults(func=run_fetch)

    refresh = act.add_parser(
        "refresh", help="re-run each gold SPARQL query against a KB and store a new version"
    )
    refresh.add_argument("name", help="NAME[@N] of a loaded dataset")
    refresh.add_argument("--endpoint", required=True, help="SPARQL endpoint URL")
    refresh.add_argument("--timeout", type=float, default=30.0, help="seconds per query")
    refresh.add_argument("--json", action="store_true")
    refresh.set_defaults(func=run_refresh)

    check = act.add_parser("check", help="check a dataset (stored by NAME, or a file by PATH)")
    check.add_argument("target", help="NAME[@N] of a loaded dataset, or a file path")
    check.add_argument("--format", choices=FORMATS, help="force a format (for a PATH)")
    check.add_argument(
        "--kb",
        metavar="NAME|URL",
        help="TEXT2SPARQL: run the reference queries on this KB and list every question where "
        "the results differ from the gold answers",
    )
    check.add_argument(
        "--gold-results",
        type=Path,
        metavar="RESULT_SET",
        help="TEXT2SPARQL (a PATH): the reference result set giving the file its gold answers",
    )
    check.add_argument(
        "--fail-on",
        choices=["error", "warning"],
        help="exit with status 1 when findings of this severity (or worse) exist",
    )
    check.add_argument("--json", action="store_true")
    check.set_defaults(func=run_check)

    engines = act.add_parser(
        "engines",
        help="run a dataset's reference queries on two engines and list the questions whose "
        "results differ",
    )
    engines.add_argument("target", help="NAME[@N] of a loaded dataset, or a questions file")
    engines.add_argument("--kb", required=True, metavar="NAME|URL", help="the first engine")
    engines.add_argument("--versus", required=True, metavar="NAME|URL", help="the second engine")
    engines.add_argument("--json", action="store_true")
    engines.set_defaults(func=run_engines)

    erratum = act.add_parser(
        "erratum", help="TEXT2SPARQL: store a corrected reference as the dataset's next version"
    )
    erratum.add_argument("name", help="NAME[@N] of the loaded dataset to correct")
    how = erratum.add_mutually_exclusive_group(required=True)
    how.add_argument(
        "--count-distinct",
        action="store_true",
        help="correct the queries that count rows where COUNT(DISTINCT ...) was meant "
        "(TEXT2SPARQL issue #143): rewrite them, run them on --kb",
    )
    how.add_argument(
        "--corrections",
        type=Path,
        metavar="FILE",
        help="a JSON file: qname -> {result: {value: 1}, reason: text, query?}",
    )
    erratum.add_argument("--kb", metavar="NAME|URL", help="where --count-distinct runs queries")
    erratum.add_argument("--json", action="store_true")
    erratum.set_defaults(func=run_erratum)


def _info_json(info: library.VersionInfo) -> dict[str, Any]:
    doc = asdict(info)
    doc["id"] = f"{info.name}/v{info.version}"
    doc["languages"] = list(info.languages)
    return doc


def _licence_iri(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc or " " in value:
        raise argparse.ArgumentTypeError(
            f"expected the http(s) IRI of a licence (e.g. "
            f"https://creativecommons.org/licenses/by/4.0/), got {value!r}"
        )
    return value


def _is_text2sparql(ctx: Context, path: Path, forced: str | None) -> bool:
    if forced is not None:
        return forced == SourceFormat.TEXT2SPARQL.value
    # a cheap look that never fails: the load itself reports what is wrong with the file
    try:
        with path.open("rb") as handle:
            head = handle.read(1 << 16).decode("utf-8", errors="replace")
    except OSError:
        return False
    return looks_like_questions(head)


def run_load(ctx: Context, args: argparse.Namespace) -> int:
    """Load one file (a TEXT2SPARQL or SciQA questions file with its gold answers)."""
    if args.path.is_dir():
        return _load_mirage_rawdata(ctx, args)
    text2sparql = _is_text2sparql(ctx, args.path, args.format)
    if args.gold_results is not None and not text2sparql:
        return _load_sciqa(ctx, args)
    if args.gold_results is not None or text2sparql:
        return _load_text2sparql(ctx, args)
    outcome = library.load_dataset(
        ctx.store,
        ctx.config.base_iri,
        args.path,
        name=args.name,
        format=SourceFormat(args.format) if args.format else None,
        knowledge_base=args.kb,
        title=args.title,
        max_bytes=ctx.config.datasets.max_file_bytes,
        new_version=args.new_version,
        license=args.license,
    )
    _report_load(ctx, outcome, args.json)
    return 0


def _load_text2sparql(ctx: Context, args: argparse.Namespace) -> int:
    """Load TEXT2SPARQL questions with gold from --gold-results or from the reference queries."""
    executor = ctx.executor(args.kb) if args.kb else None
    outcome, differences = load_text2sparql(
        ctx.store,
        ctx.config.base_iri,
        args.path,
        gold_results=args.gold_results,
        executor=executor,
        max_bytes=ctx.config.datasets.max_file_bytes,
        name=args.name,
        title=args.title,
        knowledge_base=args.kb if args.kb and not is_endpoint(args.kb) else None,
        new_version=args.new_version,
        license=args.license,
    )
    _report_load(ctx, outcome, args.json, differences)
    return 0


def _load_mirage_rawdata(ctx: Context, args: argparse.Namespace) -> int:
    """Build MIRAGE's benchmark.json from its rawdata/ folder as the repository does, say
    whether it is the published file, and load it (issue 39)."""
    data = build_benchmark(args.path, max_bytes=ctx.config.datasets.max_file_bytes)
    digest = hashlib.sha256(data).hexdigest()
    published = catalog.entry("mirage").sha256
    same = "the published file" if digest == published else f"NOT the published {published}"
    print(f"built benchmark.json from {args.path}: {len(data)} bytes, sha256 {digest} ({same})",
          file=sys.stderr)  # fmt: skip
    outcome = library.load_dataset_bytes(
        ctx.store,
        ctx.config.base_iri,
        data,
        source=str(args.path / "benchmark.json"),
        name=args.name,
        format=SourceFormat.MIRAGE,
        knowledge_base=args.kb,
        title=args.title,
        new_version=args.new_version,
        license=args.license,
    )
    _report_load(ctx, outcome, args.json)
    return 0


def _load_sciqa(ctx: Context, args: argparse.Namespace) -> int:
    """Load SciQA questions with SciQA's answers.json or a FIRESPARQL run as gold (issue 39)."""
    outcome = load_sciqa(
        ctx.store,
        ctx.config.base_iri,
        args.path,
        gold_results=args.gold_results,
        max_bytes=ctx.config.datasets.max_file_bytes,
        name=args.name,
        title=args.title,
        knowledge_base=args.kb,
        new_version=args.new_version,
        license=args.license,
    )
    _report_load(ctx, outcome, args.json)
    return 0


def _report_load(
    ctx: Context,
    outcome: library.LoadOutcome,
    as_json: bool,
    differences: dict[str, str] | None = None,
) -> None:
    info = outcome.info
    if as_json:
        doc = _info_json(info)
        doc.update(created=outcome.created, warnings=list(outcome.warnings))
        if differences is not None:
            doc["reference_differences"] = differences
        ctx.emit_json(doc)
        return
    if differences:
        print(
            f"{len(differences)} question(s) whose reference query gives another result on the "
            "knowledge base than the gold result set (listed as warnings; `datasets check "
            "--kb` lists them again)",
            file=sys.stderr,
        )
    if outcome.created:
        print(f"{info.name}/v{info.version}\t{info.questions} questions\t{info.iri}")
    else:
        print(
            f"{info.name}/v{info.version}\t{info.questions} questions\t(unchanged: identical "
            f"to version {info.version}, nothing loaded)"
        )
    for warning in outcome.warnings[:20]:
        print(f"warning: {warning}", file=sys.stderr)
    if len(outcome.warnings) > 20:
        print(f"warning: … and {len(outcome.warnings) - 20} more", file=sys.stderr)


def run_list(ctx: Context, args: argparse.Namespace) -> int:
    """List stored versions."""
    versions = library.list_versions(ctx.store, ctx.config.base_iri)
    if args.json:
        ctx.emit_json([_info_json(v) for v in versions])
        return 0
    if not versions:
        print(
            "no datasets loaded; try `qabench datasets load PATH` or `qabench datasets fetch NAME`"
        )
        return 0
    print(f"{'DATASET':40} {'QUESTIONS':>9}  {'FORMAT':9} {'LANGUAGES':24} LOADED")
    for v in versions:
        langs = ",".join(v.languages)
        print(
            f"{v.name + '/v' + str(v.version):40} {v.questions:>9}  {v.format:9} "
            f"{langs[:24]:24} {v.loaded_at}"
        )
    return 0


def run_show(ctx: Context, args: argparse.Namespace) -> int:
    """Show one dataset."""
    info = library.resolve_version(ctx.store, ctx.config.base_iri, args.name)
    versions = library.list_versions(ctx.store, ctx.config.base_iri, info.name)
    if args.json:
        ctx.emit_json({"name": info.name, "versions": [_info_json(v) for v in versions]})
        return 0
    for v in versions:
        print(f"{v.name}/v{v.version}  {v.title}")
        for key in (
            "iri",
            "questions",
            "format",
            "sha256",
            "byte_size",
            "source",
            "knowledge_base",
            "loaded_at",
        ):
            print(f"  {key:15} {getattr(v, key)}")
        print(f"  {'languages':15} {', '.join(v.languages)}")
    return 0


def run_catalog(ctx: Context, args: argparse.Namespace) -> int:
    """Print the built-in catalog."""
    entries = list(catalog.catalog().values())
    if args.json:
        ctx.emit_json([{**asdict(e), "format": e.format.value} for e in entries])
        return 0
    for e in entries:
        checked = "sha256" if e.checked else "unverified"
        served = f" [served {e.served}]" if e.served else ""
        print(
            f"{e.name:36} {e.format.value:9} {e.split:5} {e.kb:24} {checked:10} {e.title}{served}"
        )
    return 0


def run_fetch(ctx: Context, args: argparse.Namespace) -> int:
    """Download, verify and load catalog datasets."""
    mirror = args.mirror if args.mirror is not None else ctx.config.datasets.mirror
    results = []
    for name in args.names:
        outcome = catalog.fetch(
            ctx.store,
            ctx.config.base_iri,
            name,
            mirror=mirror,
            verify=not args.no_verify,
            timeout=ctx.config.datasets.download_timeout_seconds,
            max_bytes=ctx.config.datasets.max_file_bytes,
        )
        if args.json:
            doc = _info_json(outcome.info)
            doc.update(created=outcome.created, warnings=list(outcome.warnings))
            results.append(doc)
        else:
            _report_load(ctx, outcome, False)
    if args.json:
        ctx.emit_json(results[0] if len(results) == 1 else results)
    return 0


def run_erratum(ctx: Context, args: argparse.Namespace) -> int:
    """Store a corrected reference as the next version, derived from the corrected one."""
    base = ctx.config.base_iri
    info = library.resolve_version(ctx.store, base, args.name)
    dataset = library.read_dataset(ctx.store, info)
    if args.count_distinct:
        if not args.kb:
            raise CliError(
                "--count-distinct runs the corrected queries on a knowledge base: give "
                "--kb NAME|URL (or give the results: --corrections FILE)"
            )
        corrections = errata.count_distinct_corrections(dataset, ctx.executor(args.kb))
        revision = "erratum (COUNT over DISTINCT rows, TEXT2SPARQL issue #143)"
    else:
        data = read_file(args.corrections, ctx.config.datasets.max_file_bytes)
        try:
            doc = json.loads(data)
        except ValueError as exc:
            raise CliError(f"{args.corrections}: not JSON ({exc})") from exc
        corrections = errata.corrections_from(dataset, doc, source=args.corrections.name)
        revision = f"erratum ({args.corrections.name})"
    if not corrections:
        raise CliError(f"nothing to correct in {info.name}/v{info.version}; no version stored")
    fixed = errata.corrected(dataset, corrections)
    outcome = library.store_dataset(
        ctx.store, base, fixed, dataset_json(fixed, info.name), name=info.name,
        source=info.iri, knowledge_base=info.knowledge_base, title=info.title,
        derived_from=info.iri, revision=revision,
    )  # fmt: skip
    if args.json:
        doc = _info_json(outcome.info)
        doc.update(corrected_from=info.iri, corrections=[asdict(c) for c in corrections])
        ctx.emit_json(doc)
        return 0
    _report_load(ctx, outcome, False)
    print(f"{len(corrections)} question(s) corrected from {info.name}/v{info.version}:")
    for c in corrections:
        print(f"  {c.question_id}: {c.note()}")
    return 0


def run_engines(ctx: Context, args: argparse.Namespace) -> int:
    """List the questions whose reference query gives other results on the two engines."""
    path = Path(args.target)
    if path.is_file():
        dataset = parse_file(path, max_bytes=ctx.config.datasets.max_file_bytes)
        label = str(path)
    else:
        info = library.resolve_version(ctx.store, ctx.config.base_iri, args.target)
        dataset, label = library.read_dataset(ctx.store, info), f"{info.name}/v{info.version}"
    first, second = ctx.executor(args.kb), ctx.executor(args.versus)
    found = engine_differences(dataset, first, second)
    asked = sum(1 for q in dataset.questions if q.sparql)
    if args.json:
        ctx.emit_json({
            "dataset": label, "first": first.description, "second": second.description,
            "questions": asked, "differing": len(found), "differences": [asdict(d) for d in found],
        })  # fmt: skip
        return 0
    print(f"{label}: {len(found)} of {asked} reference queries give other results on "
          f"{first.description} and {second.description}")  # fmt: skip
    for d in found:
        print(f"  {d.question_id}: {d.description}")
    return 0


def run_check(ctx: Context, args: argparse.Namespace) -> int:
    """Check a stored dataset (report stored as RDF) or a file (report printed only)."""
    path = Path(args.target)
    executor = ctx.executor(args.kb) if args.kb else None
    if path.is_file():
        limit = ctx.config.datasets.max_file_bytes
        dataset = parse_file(
            path, format=SourceFormat(args.format) if args.format else None, max_bytes=limit
        )
        differences: dict[str, str] = {}
        if dataset.format is SourceFormat.TEXT2SPARQL and (args.gold_results or executor):
            prepared = prepare_gold(dataset, read_file(path, limit),
                                    gold_results=args.gold_results, executor=executor,
                                    max_bytes=limit)  # fmt: skip
            dataset, differences = prepared.dataset, prepared.differences
        report = check_dataset(dataset, library.sparql_syntax_problem, differences)
        label, stored = str(path), False
    else:
        info = library.resolve_version(ctx.store, ctx.config.base_iri, args.target)
        report = library.check_version(ctx.store, ctx.config.base_iri, info, executor)
        label, stored = f"{info.name}/v{info.version}", True
    if args.json:
        ctx.emit_json(
            {
                "dataset": label,
                "stored": stored,
                "questions": report.questions,
                "errors": report.count("error"),
                "warnings": report.count("warning"),
                "by_code": report.by_code(),
                "findings": [asdict(f) for f in report.findings],
            }
        )
    else:
        _print_report(label, report, stored)
    if args.fail_on == "error" and report.count("error"):
        return 1
    if args.fail_on == "warning" and (report.count("error") or report.count("warning")):
        return 1
    return 0


def _print_report(label: str, report: CheckReport, stored: bool) -> None:
    print(
        f"{label}: {report.questions} questions, {report.count('error')} errors, "
        f"{report.count('warning')} warnings, {report.count('info')} notes"
    )
    for code, n in report.by_code().items():
        print(f"  {n:5} x {code}")
    for f in report.findings:
        if f.severity == "info":
            continue
        where = f"question {f.question_id}" if f.question_id else "dataset"
        pos = f" (line {f.line}, column {f.column})" if f.line else ""
        print(f"{f.severity:7} {f.code:22} {where}: {f.message}{pos}")
    if stored:
        print("(report stored in the dataset version's check graph)")


def run_refresh(ctx: Context, args: argparse.Namespace) -> int:
    """Re-compute gold answers from the gold queries and store them as a new version."""
    base = ctx.config.base_iri
    info = library.resolve_version(ctx.store, base, args.name)
    dataset = library.read_dataset(ctx.store, info)
    refreshed, failures = refresh_answers(dataset, args.endpoint, timeout=args.timeout)
    outcome = library.store_dataset(
        ctx.store,
        base,
        refreshed,
        dataset_json(refreshed, info.name),
        name=info.name,
        source=args.endpoint,
        knowledge_base=info.knowledge_base,
        title=info.title,
        derived_from=info.iri,
        refreshed_with=args.endpoint,
    )
    if args.json:
        doc = _info_json(outcome.info)
        doc.update(
            created=outcome.created,
            refreshed_from=info.iri,
            failures=[{"question_id": f.question_id, "message": f.message} for f in failures],
        )
        ctx.emit_json(doc)
        return 0
    _report_load(ctx, outcome, False)
    print(
        f"{len(dataset.questions) - len(failures)} questions refreshed, {len(failures)} kept "
        "their old answers:"
    )
    for f in failures:
        print(f"  question {f.question_id}: {f.message}")
    return 0
