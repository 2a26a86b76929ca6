"""``qabench index build|info`` and ``qabench retrieve``: the literature index from the terminal.

Thin: parses arguments, opens the index in ``Config.index_dir`` (so the global ``--data-dir``
applies) and prints what ``rag`` returns, as text or as one JSON document.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import sys
from collections.abc import Iterator
from pathlib import Path

from tqdm import tqdm

from evaluators.knowledge.bases import kb_graph_of
from evaluators.knowledge.endpoint import is_endpoint
from rag.answering.snippets import Snippet, bioasq_snippet, extract_snippets
from rag.corpus.article import Article, Deletion, articles_from_records
from rag.corpus.kb_abstracts import endpoint_abstracts, store_abstracts
from rag.corpus.pubmed_xml import read_pubmed_records
from rag.corpus.reader import CorpusFormat, detect_format, read_corpus
from rag.models.dense import DenseScorer
from rag.retrieval.index import (
    MANIFEST,
    BuildReport,
    IndexInfo,
    has_index,
    open_index,
    read_manifest,
    write_manifest,
)
from rag.retrieval.retrievers import SearchResult, WhooshRetriever, question_query
from rag.retrieval.vectors import embed_articles
from server.cli.context import CliError, Context

MAX_K = 1000


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the index command group and the retrieve command."""
    ix = sub.add_parser("index")
    ix_sub = ix.add_subparsers(dest="index_command", metavar="ACTION")
    ix_sub.required = True
    build = ix_sub.add_parser("build", help="add PubMed abstracts to the index (by PMID)")
    build.add_argument("sources", nargs="*", type=Path, metavar="SOURCE", help="corpus files")
    build.add_argument(
        "--kb",
        action="append",
        default=[],
        metavar="NAME|URL",
        help="also index the dbo:abstract texts of a loaded knowledge base or a SPARQL endpoint "
        "(for QALD hybrid questions); repeatable",
    )
    build.add_argument("--language", default="en", help="abstract language for --kb (default en)")
    build.add_argument(
        "--format",
        choices=[f.value for f in CorpusFormat],
        help="format of every SOURCE (default: from each file's suffix)",
    )
    build.add_argument(
        "--resume",
        action="store_true",
        help="commit each SOURCE on its own and skip sources an earlier --resume build "
        "committed (PubMed baseline and update files, in order)",
    )
    build.add_argument(
        "--procs", type=int, default=1, help="indexing processes (default 1; 2 on 2 cores)"
    )
    build.add_argument(
        "--name",
        help="the index's name, shown with every answer (default: kept, else 'literature index')",
    )
    build.add_argument("--json", action="store_true", help="print the report as JSON")
    build.set_defaults(func=run_build)
    embed = ix_sub.add_parser(
        "embed",
        help="store MiniLM vectors of the indexed articles (hybrid retrieval); resumable",
    )
    embed.add_argument(
        "--rebuild", action="store_true", help="drop the stored vectors and embed every article"
    )
    embed.add_argument("--json", action="store_true", help="print the report as JSON")
    embed.set_defaults(func=run_embed)
    comp = ix_sub.add_parser(
        "compile",
        help="compile the postings of segments that have none (fast word queries; builds do "
        "this after every commit, so only indexes built by older versions need it)",
    )
    comp.add_argument(
        "--procs", type=int, default=1, help="compiling processes (default 1; 2 on 2 cores)"
    )
    comp.set_defaults(func=run_compile)
    info = ix_sub.add_parser("info", help="show document count, fields, size and age")
    info.add_argument("--json", action="store_true", help="print the information as JSON")
    info.set_defaults(func=run_info)

    ret = sub.add_parser("retrieve")
    ret.add_argument("question", help="the question in natural language")
    ret.add_argument("--k", type=int, help="number of documents (default: rag.top_k)")
    ret.add_argument(
        "--query", help="run this query (query syntax) instead of the question's words"
    )
    ret.add_argument("--snippets", type=int, help="number of snippets (default: rag.snippets)")
    ret.add_argument(
        "--dense",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="rerank snippets with the packaged MiniLM model (default: rag.dense_rerank)",
    )
    ret.add_argument("--json", action="store_true", help="print the result as JSON")
    ret.set_defaults(func=run_retrieve)


def run_build(ctx: Context, args: argparse.Namespace) -> int:
    """Add every SOURCE to the index: one transaction, or one per file with --resume."""
    fmt = CorpusFormat(args.format) if args.format else None
    if not args.sources and not args.kb:
        raise CliError("nothing to index: give corpus files and/or --kb NAME|URL")
    if not 1 <= args.procs <= 64:
        raise CliError(f"--procs must be between 1 and 64, found {args.procs}")
    for source in args.sources:
        if not source.is_file():
            raise CliError(f"{source}: no such file")
        if fmt is None:
            detect_format(source)  # fail on an unknown suffix before anything is written
    from server.demo import example_pmids  # the demo's modules load only for a build

    progress = sys.stderr.isatty()
    reports: list[BuildReport] = []
    folder = ctx.config.index_dir
    # files of the last committed state: what a failed transaction wrote besides is removed
    kept = _files(folder)
    try:
        with open_index(folder, create=True) as index:
            # the example abstracts are no literature: an index an earlier release built with
            # them loses them in the same transaction as this build adds its own
            demo = [Deletion(p) for p in sorted(example_pmids()) if index.document(p) is not None]
            demo_removed = len(demo)
            if args.resume:
                done = _committed_sources(folder)
                for source in args.sources:
                    key = _source_key(source)
                    if key in done:
                        continue
                    records = itertools.chain(demo, _records(source, fmt))
                    demo = []
                    reports.append(index.add(records, progress=progress, procs=args.procs))
                    done.append(key)
                    _write_committed(folder, done)
                    kept = _files(folder)
                kb = itertools.chain.from_iterable(
                    _kb_articles(ctx, spec, args.language) for spec in args.kb
                )
                if args.kb:
                    reports.append(index.add(kb, progress=progress))
            else:
                records = itertools.chain(
                    demo,
                    itertools.chain.from_iterable(_records(s, fmt) for s in args.sources),
                    itertools.chain.from_iterable(
                        _kb_articles(ctx, spec, args.language) for spec in args.kb
                    ),
                )
                reports.append(index.add(records, progress=progress, procs=args.procs))
            documents = index.info().documents
            recorded, was_demo = read_manifest(folder)
            name = args.name or (recorded if (folder / MANIFEST).exists() else "")
            write_manifest(folder, name if name and not was_demo else DEFAULT_NAME)
    except OSError as exc:
        # A full disk (or another write failure) while adding: the index keeps its last
        # committed state; the partial segment files the failed transaction wrote go.
        removed = _remove_new_files(folder, kept)
        note = " (sources committed before it stay; --resume skips them)" if args.resume else ""
        raise CliError(
            f"indexing failed and added nothing of this run{note}: {exc.strerror or exc}; "
            f"removed {removed} partial files from {folder}; free space and run it again"
        ) from exc
    if demo_removed:
        print(
            f"removed {demo_removed} demo document(s) (the example abstracts) from the index: "
            "they are not literature; the demo has an index of its own",
            file=sys.stderr,
        )
    report = _summed(reports, documents)
    if args.json:
        ctx.emit_json(_report_json(report, args.sources))
    else:
        rate = (report.added + report.replaced) / report.seconds if report.seconds else 0.0
        print(
            f"indexed {report.added + report.replaced} articles ({report.added} new, "
            f"{report.replaced} replaced, {report.duplicates} repeated PMIDs skipped, "
            f"{report.deleted} deleted citations removed) in {report.seconds:.1f} s "
            f"({rate:.0f} docs/s); the index holds {report.documents}"
        )
    return 0


SOURCES_FILE = "sources.json"
DEFAULT_NAME = "literature index"


def _files(folder: Path) -> set[Path]:
    """Return the files under ``folder`` now (none if it does not exist)."""
    return {p for p in folder.rglob("*") if p.is_file()} if folder.is_dir() else set()


def _remove_new_files(folder: Path, kept: set[Path]) -> int:
    """Remove the files under ``folder`` that are not in ``kept``; return how many went."""
    removed = 0
    for path in _files(folder) - kept:
        try:
            path.unlink()
            removed += 1
        except OSError:
            continue
    return removed


def _records(source: Path, fmt: CorpusFormat | None) -> Iterator[Article | Deletion]:
    """Read one source; PubMed XML also yields its deleted citations."""
    if (fmt or detect_format(source)) is CorpusFormat.PUBMED_XML:
        return read_pubmed_records(source)
    return read_corpus(source, fmt)


def _source_key(source: Path) -> str:
    stat = source.stat()
    return f"{source.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"


def _committed_sources(index_dir: Path) -> list[str]:
    path = index_dir / SOURCES_FILE
    if not path.is_file():
        return []
    value = json.loads(path.read_text("utf-8"))
    return [str(v) for v in value] if isinstance(value, list) else []


def _write_committed(index_dir: Path, done: list[str]) -> None:
    scratch = index_dir / f".{SOURCES_FILE}.partial"
    scratch.write_text(json.dumps(done, indent=1), "utf-8")
    scratch.replace(index_dir / SOURCES_FILE)


def _summed(reports: list[BuildReport], documents: int) -> BuildReport:
    return BuildReport(
        added=sum(r.added for r in reports),
        replaced=sum(r.replaced for r in reports),
        duplicates=sum(r.duplicates for r in reports),
        documents=documents,
        seconds=sum(r.seconds for r in reports),
        deleted=sum(r.deleted for r in reports),
    )


def run_embed(ctx: Context, args: argparse.Namespace) -> int:
    """Encode every indexed article that has no vector yet (all of them with --rebuild)."""
    encoder = DenseScorer.load()
    with open_index(ctx.config.index_dir) as index:
        total = index.info().documents
        bar = tqdm(total=total, unit="doc", desc="embedding", disable=not sys.stderr.isatty())
        report = embed_articles(
            ctx.config.index_dir,
            index.articles(),
            encoder,
            rebuild=args.rebuild,
            progress=bar.update,
        )
        bar.close()
    if args.json:
        print(json.dumps(dataclasses.asdict(report)))
    else:
        print(
            f"embedded {report.embedded} articles ({report.already} had vectors); "
            f"{report.vectors} vectors stored"
        )
    return 0


def run_compile(ctx: Context, args: argparse.Namespace) -> int:
    """Compile the postings of every segment that has no compiled copy."""
    if not 1 <= args.procs <= 64:
        raise CliError(f"--procs must be between 1 and 64, found {args.procs}")
    with open_index(ctx.config.index_dir) as index:
        count = index.compile(procs=args.procs)
        info = index.info()
    print(
        f"compiled {count} segments; {info.compiled_segments} of {info.segments} "
        "segments have compiled postings"
    )
    return 0


def run_info(ctx: Context, args: argparse.Namespace) -> int:
    """Describe the index that answers questions: the real one, else the demo index."""
    directory = ctx.config.index_dir
    if not has_index(directory) and has_index(ctx.config.demo_index_dir):
        directory = ctx.config.demo_index_dir
    with open_index(directory) as index:
        info = index.info()
    if args.json:
        ctx.emit_json(_info_json(info))
        return 0
    modified = info.last_modified.isoformat(timespec="seconds") if info.last_modified else "-"
    name, demo = read_manifest(info.directory)
    print(f"name           {name}{' (the demo index)' if demo else ''}")
    print(f"directory      {info.directory}")
    print(f"documents      {info.documents}")
    print(f"fields         {', '.join(info.fields)}")
    print(f"size           {info.size_bytes / 1_000_000:.1f} MB ({info.size_bytes} bytes)")
    print(f"last modified  {modified}")
    print(f"segments       {info.segments} ({info.compiled_segments} with compiled postings)")
    return 0


def run_retrieve(ctx: Context, args: argparse.Namespace) -> int:
    """Search, extract snippets and print the ranked documents."""
    rag = ctx.config.rag
    k = _bounded("--k", rag.top_k if args.k is None else args.k, MAX_K)
    limit = _bounded("--snippets", rag.snippets if args.snippets is None else args.snippets, MAX_K)
    question = args.question.strip()
    if not question or len(question) > rag.max_question_chars:
        raise CliError(
            f"the question must have 1 to {rag.max_question_chars} characters "
            f"(rag.max_question_chars), found {len(question)}"
        )
    query = args.query if args.query is not None else question_query(question)
    if not query.strip():
        raise CliError("the question has no content words to search for; pass --query QUERY")
    dense = DenseScorer.load() if (rag.dense_rerank if args.dense is None else args.dense) else None
    with open_index(ctx.config.index_dir) as index:
        retriever = WhooshRetriever(index)
        result = retriever.search(query, k, question=question)
        snippets = extract_snippets(
            question, result.documents, tokenize=retriever.tokenize, limit=limit, dense=dense
        )
    if args.json:
        ctx.emit_json(_result_json(question, result, snippets))
    else:
        _print_result(result, snippets)
    return 0


def _bounded(option: str, value: int, high: int) -> int:
    if not 1 <= value <= high:
        raise CliError(f"{option} must be between 1 and {high}, found {value}")
    return value


def _kb_articles(ctx: Context, spec: str, language: str) -> Iterator[Article]:
    if is_endpoint(spec):
        records = endpoint_abstracts(spec, language)
    else:
        graph = kb_graph_of(ctx.store, ctx.config.base_iri, spec)
        if graph is None:
            raise CliError(f"--kb {spec}: no such knowledge base; load it with `qabench kb load`")
        records = store_abstracts(ctx.store, [graph], language)
    return articles_from_records(records, source=spec)


def _report_json(report: BuildReport, sources: list[Path]) -> dict[str, object]:
    return {
        "sources": [str(s) for s in sources],
        "added": report.added,
        "replaced": report.replaced,
        "duplicates": report.duplicates,
        "deleted": report.deleted,
        "documents": report.documents,
        "seconds": round(report.seconds, 3),
    }


def _info_json(info: IndexInfo) -> dict[str, object]:
    name, demo = read_manifest(info.directory)
    return {
        "name": name,
        "demo": demo,
        "directory": str(info.directory),
        "documents": info.documents,
        "fields": list(info.fields),
        "size_bytes": info.size_bytes,
        "last_modified": info.last_modified.isoformat() if info.last_modified else None,
        "segments": info.segments,
        "compiled_segments": info.compiled_segments,
    }


def _result_json(
    question: str, result: SearchResult, snippets: tuple[Snippet, ...]
) -> dict[str, object]:
    return {
        "question": question,
        "query": result.query_run,
        "fallback": result.fallback.value,
        "attempts": list(result.attempts),
        "documents": [
            {
                "rank": doc.rank,
                "pmid": doc.pmid,
                "score": round(doc.score, 6),
                "title": doc.article.title,
                "snippets": [
                    {**bioasq_snippet(s), "score": round(s.score, 6)}
                    for s in snippets
                    if s.pmid == doc.pmid
                ],
            }
            for doc in result.documents
        ],
    }


def _print_result(result: SearchResult, snippets: tuple[Snippet, ...]) -> None:
    note = "" if result.fallback.value == "none" else f"  (fallback: {result.fallback.value})"
    print(f"query: {result.query_run}{note}")
    if not result.documents:
        print("no documents found")
    for doc in result.documents:
        print(f"{doc.rank:>3}. {doc.pmid:<10} {doc.score:8.3f}  {doc.article.title[:100]}")
        for s in (s for s in snippets if s.pmid == doc.pmid):
            where = f"{s.begin_section} {s.offset_begin}-{s.offset_end}"
            print(f"       [{where}] {s.text}")
