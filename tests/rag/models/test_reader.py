"""The yes/no reader: MiniLM fine-tuned from the packaged weights on the reference data's
labelled yes/no questions (rag.models.reader), and how the pipeline and the CLI use it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from rag.answering.snippets import Snippet
from rag.errors import ModelUnavailableError
from rag.models.generators import ExtractiveGenerator
from rag.models.reader import (
    YesNoReader,
    bioasq_examples,
    pubmedqa_examples,
    train,
    training_sources,
)
from rag.pipeline import RagSystem
from rag.run import RagSettings
from server.cli import main
from tests.server.ask.test_demo_index import YESNO, _judged

# trains (a small reader) and loads real models: tens of seconds
pytestmark = pytest.mark.slow

QUESTION = "Is dronedarone effective for atrial fibrillation?"
AFFIRMING = "Dronedarone reduced the recurrence of atrial fibrillation in the trial."


@pytest.fixture(scope="module")
def reader_dir(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setenv("TRANSFORMERS_OFFLINE", "1")
        out = tmp_path_factory.mktemp("reader")
        train(out, training_sources(shared_data), epochs=1, max_length=64, limit=48)
        yield out


def test_the_training_sources_are_read_whole_and_labelled(shared_data: Path) -> None:
    sources = training_sources(shared_data)
    pubmedqa = pubmedqa_examples(sources["PubMedQA (expert-labelled)"])
    bioasq = bioasq_examples(sources["BioASQ 2b training"])
    # PubMedQA: 1,000 expert-labelled questions, 552 yes + 338 no (110 "maybe" left out)
    assert len(pubmedqa) == 890
    assert sum(e.no for e in pubmedqa) == 338
    # BioASQ 2b training: 85 yes/no questions ("Yes." and "No." once each), 15 of them "no";
    # one "no" has no snippets and is left out
    assert len(bioasq) == 84
    assert sum(e.no for e in bioasq) == 14
    assert all(e.evidence.strip() for e in bioasq)


def test_missing_training_data_is_named(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"ori_pqal\.json: training data not found"):
        training_sources(tmp_path)


def test_a_trained_reader_says_what_it_read_and_gives_probabilities(reader_dir: Path) -> None:
    manifest = json.loads((reader_dir / "reader.json").read_text())
    assert manifest["sources"] == {"PubMedQA (expert-labelled)": 890, "BioASQ 2b training": 84}
    assert manifest["examples"] == 48
    assert 0 < manifest["no_share"] < 1
    reader = YesNoReader.load(reader_dir)
    first = reader.no_probability(QUESTION, [AFFIRMING])
    assert 0.0 <= first <= 1.0
    assert reader.no_probability(QUESTION, [AFFIRMING]) == pytest.approx(first)


def test_a_folder_without_a_reader_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailableError, match=r"no yes/no reader in .*train-reader"):
        YesNoReader.load(tmp_path)


def _forced(reader_dir: Path, no: bool) -> YesNoReader:
    """The trained reader with its last layer's bias set so that it reads "no" (or "yes")
    whatever it is given: a real model whose reading the test knows."""
    import torch

    reader = YesNoReader.load(reader_dir)
    with torch.no_grad():
        reader._model.classifier.bias.copy_(torch.tensor([-50.0, 50.0] if no else [50.0, -50.0]))
    return reader


def _ask(reader: YesNoReader | None, text: str) -> tuple[str | None, dict[str, str]]:
    system = RagSystem(
        lambda: None,  # type: ignore[arg-type,return-value]
        ExtractiveGenerator(),
        RagSettings(),
        reader=reader,
        reader_off="off: none trained",
    )
    given = [Snippet("1", text, "abstract", "abstract", 0, len(text) - 1, "1", 0, 0.0, 0.0)]
    run = system.answer_given(QUESTION, given, kind="yesno")
    return run.exact_answer.yesno, dict(run.settings)


def test_the_reader_reads_no_where_the_word_rules_find_no_denial(reader_dir: Path) -> None:
    # the words affirm: yes by the rules alone, and the run says the reader was off
    answer, settings = _ask(None, AFFIRMING)
    assert answer == "yes"
    assert settings["yesno_check"] == "words only; reader model off: none trained"
    # a reader that reads "no" turns it into "no", and the run says the reader read it
    answer, settings = _ask(_forced(reader_dir, no=True), AFFIRMING)
    assert answer == "no"
    assert settings["yesno_check"] == "words and reader model (fine-tuned MiniLM)"
    # a reader that reads "yes" never overrules a denial the words state
    denial = "Dronedarone did not reduce the recurrence of atrial fibrillation."
    assert _ask(_forced(reader_dir, no=False), denial)[0] == "no"
    assert _ask(_forced(reader_dir, no=False), AFFIRMING)[0] == "yes"


def test_the_cli_trains_a_reader_that_ask_then_uses(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = tmp_path / "config.toml"
    toml.write_text(
        f'[store]\ndata_dir = "{tmp_path / "data"}"\n'
        f'[datasets]\nreference_data = "{shared_data}"\n',
        "utf-8",
    )
    cli = ["--config", str(toml)]
    assert main([*cli, "train-reader", "--epochs", "0"]) == 2
    assert "--epochs must be between 1 and 20, not 0" in capsys.readouterr().err
    assert main([*cli, "train-reader", "--limit", "32", "--epochs", "1", "--json"]) == 0
    trained = json.loads(capsys.readouterr().out)
    where = tmp_path / "data" / "models" / "yesno-reader"
    assert trained["reader"] == str(where)
    assert trained["examples"] == 32
    assert (where / "reader.json").is_file()
    # the app, the JSON, the page and qabench ask use it from rag.yesno_reader, and say so
    (tmp_path / "ask").mkdir()
    body, html = _judged(
        tmp_path / "ask", YESNO, f'meaning_check = false\nyesno_reader = "{where}"'
    )
    said = "words and reader model (fine-tuned MiniLM)"
    assert body["answered"] is True
    assert body["settings"]["yesno_check"] == said
    assert f"Yes or no read by {said}." in html
    assert f"yes/no:    read by {said}" in capsys.readouterr().out


def test_the_cli_names_missing_training_data(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = tmp_path / "config.toml"
    toml.write_text(
        f'[store]\ndata_dir = "{tmp_path / "data"}"\n'
        f'[datasets]\nreference_data = "{tmp_path / "nowhere"}"\n',
        "utf-8",
    )
    assert main(["--config", str(toml), "train-reader"]) == 2
    assert "ori_pqal.json: training data not found" in capsys.readouterr().err
    assert not (tmp_path / "data" / "models").exists()
