"""List the functions over 40 lines and the modules over 300 lines of the five packages.

The sizes ``docs/architecture.md`` ("Sizes") explains, counted the way it counts them: a
function's lines from its ``def`` to its last line (docstring included), a module's lines.

    .venv/bin/python bench/sizes.py [--repo PATH]
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

PACKAGES = ("server", "evaluators", "rag", "store", "vocab")
MAX_FUNCTION_LINES = 40
MAX_MODULE_LINES = 300


def sizes(repo: Path) -> tuple[dict[str, int], dict[str, int]]:
    """Return the long functions (``path:name``) and the long modules (``path``) of ``repo``."""
    functions: dict[str, int] = {}
    modules: dict[str, int] = {}
    for package in PACKAGES:
        for path in sorted((repo / package).rglob("*.py")):
            source = path.read_text(encoding="utf-8")
            name = path.relative_to(repo).as_posix()
            if source.count("\n") > MAX_MODULE_LINES:
                modules[name] = source.count("\n")
            for node in ast.walk(ast.parse(source)):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    length = (node.end_lineno or node.lineno) - node.lineno + 1
                    if length > MAX_FUNCTION_LINES:
                        functions[f"{name}:{node.name}"] = length
    return functions, modules


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parent.parent)
    args = parser.parse_args()
    functions, modules = sizes(args.repo.resolve())
    print(f"{len(modules)} modules over {MAX_MODULE_LINES} lines:")
    for name, lines in sorted(modules.items(), key=lambda item: -item[1]):
        print(f"  {lines:5d}  {name}")
    print(f"{len(functions)} functions over {MAX_FUNCTION_LINES} lines:")
    for name, lines in sorted(functions.items(), key=lambda item: -item[1]):
        print(f"  {lines:5d}  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
