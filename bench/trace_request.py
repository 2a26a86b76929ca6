"""Count the project modules one request passes through (the layout issue's "hops").

Traces every Python call made while serving one HTML experiment page (cold: the first request
after the experiment was written, so nothing is cached; warm: the same request again) and while
running ``qabench evaluate`` on the example data. It prints, per case, how many distinct
modules of ``server``, ``evaluators``, ``rag``, ``store`` and ``vocab`` had a function called,
how many distinct caller -> callee module edges were crossed, how many calls crossed a module
boundary in all, and the deepest chain of modules on the call stack. The script only uses entry
points that every layout of the repository has (``server.app.create_app``, ``server.cli.main``,
``server.demo.ensure_demo``), so the same file measures an old checkout and a new one:

    .venv/bin/python bench/trace_request.py [--repo PATH] [--list] [--edges]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
from pathlib import Path
from types import FrameType
from typing import Any

PACKAGES = ("server", "evaluators", "rag", "store", "vocab")


def _module_of(frame: FrameType, root: str) -> str | None:
    path = frame.f_code.co_filename
    if not path.startswith(root):
        return None
    rel = path[len(root) :].lstrip("/")
    if not rel.endswith(".py") or rel.split("/", 1)[0] not in PACKAGES:
        return None
    return rel[:-3].replace("/", ".").removesuffix(".__init__")


class Tracer:
    """Collect the project modules whose functions were called, and the module edges."""

    def __init__(self, root: Path) -> None:
        self.root = str(root)
        self.modules: set[str] = set()
        self.edges: set[tuple[str, str]] = set()
        self.crossings = 0
        self.depth = 0

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        callee = _module_of(frame, self.root)
        if callee is None:
            return
        self.modules.add(callee)
        chain = [callee]
        nearest = True
        back = frame.f_back
        while back is not None:
            caller = _module_of(back, self.root)
            if caller is not None:
                if nearest and caller != callee:
                    self.edges.add((caller, callee))
                    self.crossings += 1
                nearest = False
                if caller != chain[-1]:
                    chain.append(caller)
            back = back.f_back
        self.depth = max(self.depth, len(chain))

    def __enter__(self) -> Tracer:
        sys.setprofile(self)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.setprofile(None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--list", action="store_true", help="print the modules of each case")
    parser.add_argument("--edges", action="store_true", help="print the module edges of each case")
    args = parser.parse_args()
    repo = args.repo.resolve()
    sys.path.insert(0, str(repo))

    from server.app import create_app
    from server.cli import main as cli_main
    from server.config import config_from_dict

    results: list[tuple[str, Tracer]] = []
    with tempfile.TemporaryDirectory() as tmp:
        config = config_from_dict(
            {
                "server": {"base_iri": "http://qabench.test", "demo": True},
                "store": {"data_dir": str(Path(tmp) / "data")},
            },
            source=repo / "config.toml",
        )
        app = create_app(config)
        client = app.test_client()
        listing = client.get("/experiments.nt").get_data(as_text=True)
        experiment = next(
            token.strip("<>")
            for line in listing.splitlines()
            for token in line.split()
            if "/experiment/" in token
        )
        path = "/" + experiment.split("/", 3)[3]
        for label in ("cold", "warm"):
            with Tracer(repo) as tracer:
                response = client.get(path, headers={"Accept": "text/html"})
            assert response.status_code == 200, response.status_code
            results.append((f"GET {path} (HTML, {label})", tracer))
        # the other kinds of response, each once (cold)
        for other, accept in (
            (path, "text/turtle"),
            ("/experiments", "text/html"),
            ("/vocab", "text/html"),
            ("/.well-known/void", "text/turtle"),
        ):
            with Tracer(repo) as tracer:
                response = client.get(other, headers={"Accept": accept})
            assert response.status_code == 200, (other, response.status_code)
            results.append((f"GET {other} ({accept})", tracer))
        app.extensions["services"].close()

        examples = repo / "server" / "examples"
        argv = [
            "--data-dir",
            str(Path(tmp) / "cli"),
            "evaluate",
            "--dataset",
            str(examples / "example-questions.json"),
            "--answers",
            str(examples / "example-answers.json"),
            "--json",
        ]
        with Tracer(repo) as tracer, contextlib.redirect_stdout(io.StringIO()):
            status = cli_main(argv)
        assert status == 0, status
        results.append(("qabench evaluate (example data)", tracer))

    for label, tracer in results:
        print(
            f"{label}: {len(tracer.modules)} modules, {len(tracer.edges)} module edges, "
            f"{tracer.crossings} calls across modules, chains {tracer.depth} modules deep"
        )
        if args.list:
            for name in sorted(tracer.modules):
                print(f"    {name}")
        if args.edges:
            for caller, callee in sorted(tracer.edges):
                print(f"    {caller} -> {callee}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
