"""The ``qabench`` console script: parse arguments, build ``Config``, call the packages.

Thin by design: each subcommand group lives in ``server/cli/<group>.py`` and exposes
``register(subparsers)``, which adds its parser and sets ``func(ctx, args) -> int``; to add a
group, write its module and list its commands in ``COMMANDS``. A group's module is imported only
when one of its commands runs (``qabench evaluate`` loads neither the web app nor the RAG
system): the command is found on the command line first, then the parser is built with that
group alone, and every other command stands in the listing with its line from ``COMMANDS``.
Errors from any package become one readable line on stderr and a non-zero exit status; with
``--json`` stdout then holds one JSON document ``{"error": {"message": ..., "status": ...}}``,
so stdout is always valid JSON.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from evaluators.errors import EvaluationError
from rag.errors import RagError
from server.cli.context import CliError, Context
from server.config import ConfigError, load_config
from store.errors import StoreError

log = logging.getLogger(__name__)

# Each command: the module of server/cli that registers it, and its line in ``qabench --help``.
COMMANDS: dict[str, tuple[str, str]] = {
    "datasets": ("datasets", "load, list, fetch and check benchmark datasets"),
    "export": ("export_import", "write the whole store to an N-Quads (or TriG) file"),
    "import": ("export_import", "add an N-Quads (or TriG) file to the store"),
    "evaluate": ("evaluate", "score an answers file against a dataset"),
    "kb": ("kb", "load and list knowledge bases for answer matching"),
    "index": ("index", "build and describe the literature index"),
    "retrieve": ("index", "search the literature index for a question"),
    "serve": ("serve", "run the web server (pages, linked data, SPARQL)"),
    "experiment": ("experiment", "run QA systems on datasets as citable experiments"),
    "ask": ("ask", "answer a biomedical question with the built-in RAG system"),
    "train-reader": ("ask", "make the yes/no reader model /ask uses beside its word rules"),
    "answer": (
        "answer",
        "run a built-in system (gold, rag, ...) over a dataset, write its answers",
    ),
}

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


class _Probe(_Parser):
    """A parser that fails without a word (``main`` finds the command with it)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _global_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, help="config file (default: config.toml)")
    parser.add_argument(
        "--data-dir",
        type=Path,
        help="directory for the store, indexes and caches (overrides the config; "
        "also QABENCH_DATA_DIR)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")


def command_of(arguments: Sequence[str]) -> str | None:
    """Return the command named on the command line, or None (none, an unknown one, or
    ``--help`` before it: the parser then lists every command)."""
    probe = _Probe(prog="qabench", add_help=False)
    _global_options(probe)
    probe.add_argument("command", nargs="?")
    probe.add_argument("rest", nargs=argparse.REMAINDER)
    try:
        found, before = probe.parse_known_args(arguments)
    except UsageError:
        return None
    if found.command not in COMMANDS or {"-h", "--help"} & set(before):
        return None
    return str(found.command)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Return the argument parser: ``command``'s group registered, every other command a line
    of the listing (with no command, all of them)."""
    parser = _Parser(
        prog="qabench",
        description="Benchmark question answering systems over RDF-native datasets.",
    )
    _global_options(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    group = COMMANDS[command][0] if command in COMMANDS else None
    if group is not None:
        importlib.import_module(f"server.cli.{group}").register(sub)
    for name, (module, line) in COMMANDS.items():
        if module != group:
            sub.add_parser(name, help=line)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return the exit status."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(command_of(arguments))
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
