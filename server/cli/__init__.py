"""The ``qabench`` console script: parse arguments, build ``Config``, call the packages.

Thin by design: each subcommand group lives in ``server/cli/<group>.py`` and exposes
``register(subparsers)``, which adds its parser and sets ``func(ctx, args) -> int``; to add a
group, write its module and list it in ``COMMAND_MODULES``. Errors from any package become one
readable line on stderr and a non-zero exit status.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

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


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
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
    args = parser.parse_args(argv)
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
        return EXIT_INPUT
    except KeyboardInterrupt:
        print("qabench: interrupted", file=sys.stderr)
        return 130
