"""The suite also runs the static checks (import layers, ruff, mypy) and every docstring example."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

from tests import REPO

BIN = Path(sys.executable).parent


def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)


def test_import_layers_hold() -> None:
    result = _run(str(BIN / "lint-imports"))
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_is_clean() -> None:
    result = _run(str(BIN / "ruff"), "check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_clean() -> None:
    result = _run(str(BIN / "ruff"), "format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_is_clean() -> None:
    result = _run(str(BIN / "mypy"), "server", "vocab", "store", "evaluators", "rag")
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-2000:]


def test_docstring_examples_pass() -> None:
    # Every ``>>>`` example in the five packages runs (STYLE §6); at least this many modules
    # carry examples, so a broken walk cannot pass by testing nothing.
    modules = attempted = 0
    failures: list[str] = []
    for root in ("vocab", "store", "evaluators", "rag", "server"):
        package = importlib.import_module(root)
        for info in pkgutil.walk_packages(package.__path__, f"{root}."):
            if info.name.endswith("__main__"):
                continue
            outcome = doctest.testmod(importlib.import_module(info.name))
            modules += bool(outcome.attempted)
            attempted += outcome.attempted
            if outcome.failed:
                failures.append(info.name)
    assert not failures, failures
    assert modules >= 45 and attempted >= 140, (modules, attempted)


def test_every_package_folder_holds_at_most_twelve_modules() -> None:
    # Each folder is one topic a newcomer can take in at once (docs/architecture.md).
    folders = [
        path
        for root in ("vocab", "store", "evaluators", "rag", "server", "tests")
        for path in [REPO / root, *(REPO / root).rglob("*")]
        if path.is_dir() and (path / "__init__.py").exists()
    ]
    crowded = {
        str(folder.relative_to(REPO)): n
        for folder in folders
        if (n := len(list(folder.glob("*.py")))) > 12
    }
    assert len(folders) >= 30 and not crowded, (len(folders), crowded)


def test_every_module_says_what_it_holds() -> None:
    # STYLE §6: each module starts with a docstring saying what it is responsible for.
    modules = [
        path
        for root in ("vocab", "store", "evaluators", "rag", "server")
        for path in (REPO / root).rglob("*.py")
    ]
    missing = [str(p.relative_to(REPO)) for p in modules if not _docstring(p)]
    assert len(modules) >= 150 and not missing, missing


def _docstring(path: Path) -> str | None:
    import ast

    return ast.get_docstring(ast.parse(path.read_text("utf-8")))


def test_every_module_over_300_lines_has_its_reason_in_the_architecture() -> None:
    # Issue 26: modules under ~300 lines, or a line in docs/architecture.md saying why not.
    sys.path.insert(0, str(REPO / "bench"))
    try:
        sizes = importlib.import_module("sizes")
    finally:
        sys.path.remove(str(REPO / "bench"))
    _functions, modules = sizes.sizes(REPO)
    doc = (REPO / "docs" / "architecture.md").read_text("utf-8")
    section = doc.split("### Sizes", 1)[1].split("\n### ", 1)[0]
    rows = {
        line.split("|")[1].strip().strip("`"): line
        for line in section.splitlines()
        if line.startswith("| `")
    }
    unexplained = sorted(set(modules) - set(rows))
    stale = sorted(name for name in rows if name not in modules)
    assert len(modules) >= 20 and not unexplained and not stale, (unexplained, stale)


def test_no_property_test_is_timed() -> None:
    # Hypothesis would fail an example that runs over its deadline: a wall-clock assertion,
    # which a loaded machine breaks (tests/conftest.py turns it off for every property test).
    import ast

    from hypothesis import settings

    assert settings.default.deadline is None
    timed = []
    for path in sorted((REPO / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            untimed = isinstance(node, ast.keyword) and (
                node.arg != "deadline"
                or (isinstance(node.value, ast.Constant) and node.value.value is None)
            )
            if isinstance(node, ast.keyword) and not untimed:
                timed.append(f"{path.relative_to(REPO)}:{node.value.lineno}")
    assert not timed, timed
