"""Reading minted IRIs back: every inverse in ``vocab.iris`` returns what was minted."""

from __future__ import annotations

import pytest

from vocab import iris

BASES = ("http://qabench.test", "https://example.org/deep/task/v3/question")
# Names and ids with the characters that need percent-encoding or look like layout words.
NAMES = ("qald-9", "QALD 9 test/train", "v2", "task", "question", "a%20b", "ü?#")


@pytest.mark.parametrize("base", BASES)
def test_what_is_minted_reads_back(base: str) -> None:
    cases = 0
    for name in NAMES:
        assert iris.experiment_id_of(iris.experiment_iri(base, name).value) == name
        graph = iris.graph_iri(base, "experiment", name)
        assert iris.experiment_id_of(graph.value) == name
        for number in (1, 7, 12):
            assert iris.task_number_of(iris.task_iri(base, name, number).value) == number
            assert iris.version_of(iris.dataset_version_iri(base, name, number).value) == (
                name,
                number,
            )
            question = iris.question_iri(base, name, number, name)
            assert iris.question_id_of(question.value) == name
            # the inverses agree with the full parser
            ref = iris.parse(base, iris.task_iri(base, name, number).value)
            assert ref is not None and ref.number == number
            cases += 1
    assert cases == len(NAMES) * 3


def test_only_a_task_itself_has_a_task_number() -> None:
    base = "http://qabench.test"
    task = iris.task_iri(base, "202401010001", 3)
    assert iris.task_number_of(task.value) == 3
    below = iris.sub_iri(task, "question", "7")
    assert iris.task_number_of(below.value) is None
    assert iris.task_number_of(iris.experiment_iri(base, "3").value) is None
    assert iris.task_number_of(iris.question_iri(base, "d", 1, "4").value) is None
