"""``qabench datasets ...``: load, list, fetch and check benchmark datasets."""

from __future__ import annotations

import argparse

from server.context import Context


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the datasets command group."""
    ds = sub.add_parser("datasets", help="load, list, fetch and check benchmark datasets")
    ds_sub = ds.add_subparsers(dest="datasets_command", metavar="ACTION")
    ds_sub.required = True
    lst = ds_sub.add_parser("list", help="list loaded datasets")
    lst.add_argument("--json", action="store_true")
    lst.set_defaults(func=run_list)


def run_list(ctx: Context, args: argparse.Namespace) -> int:
    """List datasets (filled in by the foundation issue)."""
    return 0
