"""``qabench export FILE.nq`` and ``qabench import FILE.nq``: the whole store as N-Quads."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pyoxigraph import RdfFormat

from server.cli.context import CliError, Context
from store.formats import rdf_serialization


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the export and import commands."""
    exp = sub.add_parser("export")
    exp.add_argument("file", type=Path, help="output file (.nq or .trig); - for stdout")
    exp.set_defaults(func=run_export)
    imp = sub.add_parser("import")
    imp.add_argument("file", type=Path, help="input file (.nq or .trig)")
    imp.add_argument(
        "--replace", action="store_true", help="empty the store first (in the same transaction)"
    )
    imp.set_defaults(func=run_import)


def _dataset_format(path: Path) -> RdfFormat:
    ser = rdf_serialization(path.suffix or "nq")
    if not ser.is_dataset:
        raise CliError(
            f"{path}: export/import need a quad format (.nq or .trig), not .{ser.extension}"
        )
    return ser.rdf_format


def run_export(ctx: Context, args: argparse.Namespace) -> int:
    """Write every quad of the store."""
    if str(args.file) == "-":
        count = ctx.store.dump(sys.stdout.buffer, RdfFormat.N_QUADS)
    else:
        count = ctx.store.dump(args.file, _dataset_format(args.file))
    print(f"exported {count} quads", file=sys.stderr)
    return 0


def run_import(ctx: Context, args: argparse.Namespace) -> int:
    """Load a quad file in one transaction."""
    if not args.file.is_file():
        raise CliError(f"{args.file}: no such file")
    store = ctx.store
    before = len(store)
    if args.replace and before:
        # Parse into memory first so a malformed file leaves the store untouched.
        from store.triplestore import TripleStore

        staging = TripleStore.in_memory()
        staging.load(args.file.read_bytes(), _dataset_format(args.file))
        store.apply(remove=store.snapshot(), add=staging.snapshot())
    else:
        store.load(args.file.read_bytes(), _dataset_format(args.file))
    print(f"imported; the store now holds {len(store)} quads (before: {before})", file=sys.stderr)
    return 0
