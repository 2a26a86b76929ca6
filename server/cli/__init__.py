"""The ``qabench`` console script: parse arguments, build ``Config``, call the packages.

Thin by design: each subcommand group lives in ``server/cli/<group>.py`` and exposes
``register(subparsers)``, which adds its parser and sets ``func(ctx, args) -> int``; to add a
group, write its module and list it in ``COMMAND_MODULES``. Errors from any package become one
readable line on stderr and a non-zero exit status; with ``--json`` stdout then holds one JSON
document ``{"error": {"message": ..., "status": ...}}``, so stdout is always valid JSON.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from evaluators.errors import EvaluationError
from rag.errors import RagError
from server.cli import (
    answer,
    ask,
    datasets,
    evaluate,
    experiment,
    export_import,
    index,
    kb,
    serve,
)
from server.cli.context import CliError, Context
from server.config import ConfigError, load_config
from store.errors import StoreError

log = logging.getLogger(__name__)

COMMAND_MODULES = [datasets, export_import, evaluate, kb, index, serve, experiment, ask, answer]

# Exit statuses: 0 success, 1 a check failed (--fail-under, datasets check), 2 usage or input error.
EXIT_INPUT = 2


class UsageError(Exception):
    """The command line itself is wrong (an unknown option, a missing argument)."""


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors reach ``main`` (so ``--json`` can report them as JSON)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        raise UsageError(f"{self.prog}: {message}")


def _json_error(message: str, status: int) -> None:
    """Print the error document that ``--json`` promises instead of the result."""
    doc = {"error": {"message": message, "status": status}}
    json.dump(doc, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser with every subcommand registered."""
    parser = _Parser(
        prog="qabench",
        description="Benchmark question answering systems over RDF-native datasets.",
    )
    parser.add_argument("--config", type=Path, help="config file (default: config.toml)")
    parser.add_argument(
        "--data-dir",
        type=Path,
        help="directory for the store, indexes and caches (overrides the config; "
        "also QABENCH_DATA_DIR)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module in COMMAND_MODULES:
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return the exit status."""
    parser = build_parser()
    arguments = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in arguments
    try:
        args = parser.parse_args(arguments)
    except UsageError as exc:
        print(f"qabench: error: {exc}", file=sys.stderr)
        if as_json:
            _json_error(str(exc), EXIT_INPUT)
        return EXIT_INPUT
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    env_dir = os.environ.get("QABENCH_DATA_DIR")
    data_dir = args.data_dir or (Path(env_dir) if env_dir else None)
    try:
        config = load_config(args.config, data_dir=data_dir)
        with Context(config) as ctx:
            status: int = args.func(ctx, args)
            return status
    except (ConfigError, CliError, EvaluationError, StoreError, RagError) as exc:
        print(f"qabench: error: {exc}", file=sys.stderr)
        if getattr(args, "json", False):
            _json_error(str(exc), EXIT_INPUT)
        return EXIT_INPUT
    except KeyboardInterrupt:
        print("qabench: interrupted", file=sys.stderr)
        return 130
