"""``qabench ask`` through ``server.cli.main``, and the RAG system as a built-in experiments system."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from evaluators.model import BioasqGold, Question, QuestionText
from server.ask.qa_system import RagQASystem, answer_question, system_registry
from server.ask.service import RagService
from server.cli import main
from server.config import Config
from store import graphs
from store.triplestore import TripleStore
from vocab.project import QAB
from vocab.standard import RDF

ASPIRIN = "Does aspirin reduce recurrent myocardial infarction?"
# the keys issue 7 requires in `qabench ask --json`
REQUIRED = {
    "question",
    "expanded_query",
    "query_edited",
    "documents",
    "snippets",
    "short_answer",
    "cited_answer",
    "exact_answer",
    "timings",
    "run",
}


@pytest.fixture
def data_dir(tmp_path: Path, rag_index_dir: Path) -> Path:
    """A data directory whose index (``<data>/index``) is a copy of the fixture index."""
    data = tmp_path / "data"
    shutil.copytree(rag_index_dir, data / "index")
    return data


def ask(capsys: pytest.CaptureFixture[str], data: Path, *args: str) -> tuple[int, str, str]:
    status = main(["--data-dir", str(data), "ask", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_ask_json_has_every_required_key_and_stores_the_run(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = ask(capsys, data_dir, ASPIRIN, "--json")
    assert status == 0, err
    run = json.loads(out)
    assert set(run) >= REQUIRED
    assert run["documents"][0] == {
        "rank": 1,
        "pmid": "1000001",
        "score": run["documents"][0]["score"],
        "title": "Aspirin after myocardial infarction: a randomised trial.",
    }
    assert all(
        {"pmid", "text", "section", "offsetInBeginSection", "offsetInEndSection"} <= set(s)
        for s in run["snippets"]
    )
    assert re.search(r"\[1000001\]", run["cited_answer"])
    cited = {p for s in run["cited_sentences"] for p in s["pmids"]}
    assert cited <= {s["pmid"] for s in run["snippets"]}
    assert run["exact_answer"] == "yes" and run["query_edited"] is False
    store = TripleStore.open(data_dir / "store")
    try:
        runs = list(
            store.quads(None, RDF.type, QAB.RagRun, graphs.rag_graph("http://localhost:8080"))
        )
        assert [q.subject.value for q in runs] == [run["run"]]
    finally:
        store.close()


def test_ask_with_an_edited_query_and_text_output(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    question = "Does clopidogrel prevent a second heart attack?"
    status, out, _ = ask(capsys, data_dir, question, "--query", "clopidogrel", "--no-store")
    assert status == 0
    assert "query:     clopidogrel (edited)" in out
    assert "[1000002]" in out and "timings: expand 0 ms" in out
    assert "\nindex:     " in out and "No answer" not in out


def test_ask_text_output_says_how_to_read_a_factoid_answer(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = ask(
        capsys, data_dir, "Which drug caused delirium in older adults?", "--no-store"
    )
    assert status == 0
    line = next(x for x in out.splitlines() if x.startswith("exact answer"))
    names = line.split(": ", 2)[-1].split("; ")
    assert any("famotidine" in n.lower() for n in names)
    reading = "the one candidate" if len(names) == 1 else "candidates ranked by the evidence"
    assert line.startswith(f"exact answer ({reading}")


def test_ask_abstains_in_text_output_when_the_documents_miss_the_subject(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the clopidogrel article speaks of a heart attack, not of myocardial infarction
    status, out, _ = ask(capsys, data_dir, ASPIRIN, "--query", "clopidogrel", "--no-store")
    assert status == 0
    assert "No answer: the evidence found does not address the question" in out
    assert "(no abstract read mentions myocardial infarction)" in out
    assert "Searched the index for 'clopidogrel': 1 document(s) found" in out
    assert "short answer:\n  -" in out and "exact answer" not in out
    assert "run: " not in out
    assert not (data_dir / "store").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("",), "the question is empty"),
        ((ASPIRIN, "--query", "aspirin AND ("), "column 13"),
        ((ASPIRIN, "--generator", "openai-http"), "rag.openai_base_url"),
    ],
)
def test_ask_errors_are_one_line_and_exit_2(
    data_dir: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str
) -> None:
    status, _, err = ask(capsys, data_dir, *args)
    assert status == 2 and err.startswith("qabench: error: ") and message in err


def test_ask_without_an_index_says_how_to_build_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = ask(capsys, tmp_path / "empty", ASPIRIN)
    assert status == 2 and "qabench index build" in err


def test_rag_is_a_registered_built_in_system(rag_config: Config, store: TripleStore) -> None:
    service = RagService(rag_config)
    registry = system_registry(service, store)
    assert registry.names() == ("gold", "rag")
    assert "extractive" in registry.info("rag").description
    system = registry.create("rag")
    assert isinstance(system, RagQASystem)
    gold = Question(
        id="q1",
        texts=(QuestionText("en", "Which drug caused delirium in older adults?"),),
        bioasq=BioasqGold(question_type="list"),
    )
    answer = system.answer(gold, "en")
    assert answer.id == "q1" and answer.bioasq is not None
    assert answer.bioasq.question_type == "list"
    assert answer.bioasq.documents[0].endswith("/1000005")
    assert answer.bioasq.entities and answer.bioasq.ideal_answers
    assert answer.answers and {v.value for v in answer.answers[0].values} >= {"famotidine"}
    stored = list(store.quads(None, RDF.type, QAB.RagRun, graphs.rag_graph(rag_config.base_iri)))
    assert len(stored) == 1


def test_yes_no_runs_become_boolean_answers(rag_config: Config) -> None:
    service = RagService(rag_config)
    run = service.system().ask(ASPIRIN)
    question = answer_question(run, "7")
    assert question.answers is not None and question.answers[0].boolean is True
    assert question.bioasq is not None and question.bioasq.yesno == "yes"


def test_experiment_cli_runs_the_built_in_rag_system(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = {
        "questions": [
            {
                "id": "1",
                "question": [{"language": "en", "string": ASPIRIN}],
                "answers": [{"head": {}, "boolean": True}],
            }
        ]
    }
    path = tmp_path / "aspirin.json"
    path.write_text(json.dumps(questions), "utf-8")
    assert (
        main(["--data-dir", str(data_dir), "datasets", "load", str(path), "--name", "aspirin"]) == 0
    )
    capsys.readouterr()
    status = main(
        [
            "--data-dir",
            str(data_dir),
            "experiment",
            "run",
            "--dataset",
            "aspirin",
            "--builtin",
            "rag",
            "--json",
        ]
    )
    out, err = capsys.readouterr()
    assert status == 0, err
    summary = json.loads(out)
    (task,) = summary["tasks"]
    assert task["system"] == "rag" and task["state"] == "finished"
    assert task["results"]["QA"]["macro_f1"] == 1.0


def test_answer_phase_b_answers_from_the_given_snippets(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the given snippet's article is not in the index: phase B never retrieves
    url = "http://www.ncbi.nlm.nih.gov/pubmed/"
    given = "Ondansetron prevented nausea in 80% of the children after strabismus surgery."
    gold = {
        "questions": [
            {
                "id": "pb1",
                "type": "factoid",
                "body": "Which drug prevented nausea after strabismus surgery?",
                "documents": [url + "31415926"],
                "snippets": [
                    {
                        "document": url + "31415926",
                        "text": given,
                        "beginSection": "abstract",
                        "endSection": "abstract",
                        "offsetInBeginSection": 0,
                        "offsetInEndSection": len(given) - 1,
                    }
                ],
                "exact_answer": [["ondansetron"]],
                "ideal_answer": ["Ondansetron."],
            }
        ]
    }
    gold_file = tmp_path / "phase-b.json"
    gold_file.write_text(json.dumps(gold), "utf-8")
    out_file = tmp_path / "answers.json"
    argv = ["--data-dir", str(data_dir), "answer", "--dataset", str(gold_file)]
    status = main([*argv, "--builtin", "rag", "--phase", "b", "-o", str(out_file)])
    assert status == 0, capsys.readouterr().err
    (answer,) = json.loads(out_file.read_text("utf-8"))["questions"]
    assert answer["exact_answer"][0] == ["Ondansetron"]
    assert "Ondansetron prevented nausea" in answer["ideal_answer"][0]
    # a phase B response carries no documents or snippets (they would score against themselves)
    assert not answer.get("documents") and not answer.get("snippets")
    assert main([*argv, "--builtin", "gold", "--phase", "b"]) == 2
