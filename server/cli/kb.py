"""``qabench kb ...``: knowledge bases used for owl:sameAs and label lookups."""

from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path

from evaluators.knowledge.bases import load_kb
from server.cli.context import CliError, Context, progress_bar
from store import queries


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the kb command group."""
    kb = sub.add_parser("kb")
    act = kb.add_subparsers(dest="kb_command", metavar="ACTION")
    act.required = True
    load = act.add_parser(
        "load", help="load RDF files (Turtle, N-Triples, …) as a named KB, into one graph"
    )
    load.add_argument("file", type=Path, nargs="+")
    load.add_argument("--name", required=True, help="the KB's name (use it with --kb NAME)")
    load.add_argument("--json", action="store_true")
    load.set_defaults(func=run_load)
    lst = act.add_parser("list", help="list loaded knowledge bases")
    lst.add_argument("--json", action="store_true")
    lst.set_defaults(func=run_list)


def run_load(ctx: Context, args: argparse.Namespace) -> int:
    """Load (or replace) a knowledge base."""
    for file in args.file:
        if not file.is_file():
            raise CliError(f"{file}: no such file")
    size = sum(file.stat().st_size for file in args.file)
    with progress_bar(size, f"loading {args.file[0].name}") as advance:
        info = load_kb(ctx.store, ctx.config.base_iri, args.file, args.name, progress=advance)
    if args.json:
        ctx.emit_json(asdict(info))
    else:
        print(f"{info.name}\t{_triples(info.triples)}\t{info.iri}")
    return 0


def _triples(count: int | None) -> str:
    """How many triples a knowledge base holds, as far as its catalog entry says.

    >>> _triples(41), _triples(None)
    ('41 triples', 'triples not counted yet (qabench serve counts them after its start)')
    """
    if count is None:
        # load_kb leaves the count to the server's page layout (it is a pass over the graph)
        return "triples not counted yet (qabench serve counts them after its start)"
    return f"{count} triples"


def run_list(ctx: Context, args: argparse.Namespace) -> int:
    """List loaded knowledge bases."""
    rows = ctx.store.select(queries.load("kb_list"))
    items: list[dict[str, object]] = []
    for row in rows:
        triples = int(row["triples"].value) if "triples" in row else None
        items.append({"name": row["name"].value, "iri": row["kb"].value, "triples": triples})
        if not args.json:
            print(f"{row['name'].value}\t{_triples(triples)}\t{row['kb'].value}")
    if args.json:
        ctx.emit_json(items)
    return 0
