"""The command table of ``qabench``: every command listed, each group loaded only when it runs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from server.cli import COMMANDS, build_parser, command_of, main
from tests import EXAMPLES, REPO


def test_help_lists_every_command_with_its_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0
    listing = capsys.readouterr().out
    shown = [name for name in COMMANDS if f"    {name} " in listing]
    assert shown == list(COMMANDS)
    assert len(shown) == 12
    for _, line in COMMANDS.values():
        assert line.split()[0] in listing


@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_group_registers_the_commands_the_table_gives_it(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    group = COMMANDS[name][0]
    parser = build_parser(name)
    choices = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert set(choices) == set(COMMANDS)
    # the group's own parsers, not stand-ins: each command's own help names its options
    with pytest.raises(SystemExit) as stop:
        main([name, "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: qabench {name} ")
    assert f"server.cli.{group}" in sys.modules


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["evaluate", "--dataset", "x"], "evaluate"),
        (["-v", "--data-dir", "d", "retrieve", "q"], "retrieve"),
        (["--help", "evaluate"], None),
        (["nonsense"], None),
        (["--config"], None),
        ([], None),
    ],
)
def test_the_command_is_found_before_parsing(argv: list[str], expected: str | None) -> None:
    assert command_of(argv) == expected


def test_an_unknown_command_is_a_usage_error_listing_the_choices(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["nonsense", "--json"]) == 2
    captured = capsys.readouterr()
    assert "invalid choice: 'nonsense'" in captured.err
    assert "evaluate" in captured.err
    assert json.loads(captured.out)["error"]["status"] == 2


def test_evaluate_on_files_loads_neither_the_web_app_nor_the_rag_system(tmp_path: object) -> None:
    # a fresh interpreter: what `qabench evaluate` imports, not what this test run already has
    code = (
        "import sys\n"
        "from server.cli import main\n"
        f"status = main(['--data-dir', {str(tmp_path)!r}, 'evaluate', '--dataset', "
        f"{str(EXAMPLES / 'example-questions.json')!r}, '--answers', "
        f"{str(EXAMPLES / 'example-answers.json')!r}, '--json'])\n"
        "heavy = ['flask', 'server.app', 'server.services', 'whoosh', 'transformers', "
        "'rag.pipeline', 'server.cli.serve', 'server.cli.experiment']\n"
        "print(sorted(m for m in heavy if m in sys.modules), status, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["results"]["QA"]["macro_f1"] == 0.5625
    assert done.stderr.strip().splitlines()[-1] == "[] 0"
