"""BioASQ task-b JSON parsing: question parts, exact-answer shapes, snippets."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from evaluators.errors import DatasetFormatError
from evaluators.formats import parse_bytes
from evaluators.model import BioasqGold, Dataset, QuestionText, Snippet, SourceFormat

PUBMED = "http://www.ncbi.nlm.nih.gov/pubmed/"


def bioasq(question: dict[str, object]) -> bytes:
    return json.dumps({"questions": [{"id": "q", "body": "b", **question}]}).encode()


def gold(question: dict[str, object]) -> BioasqGold:
    (q,) = parse_bytes(bioasq(question), source="b.json").questions
    assert q.bioasq is not None
    return q.bioasq


def test_a_yesno_question_keeps_every_part_as_written(
    formats_parse: Callable[[str], Dataset],
) -> None:
    dataset = formats_parse("bioasq-edge.json")
    assert dataset.format is SourceFormat.BIOASQ
    y1 = dataset.by_id()["y1"]
    assert y1.texts == (QuestionText("en", "Is aspirin an NSAID?"),)
    assert y1.answers is None
    assert y1.bioasq == BioasqGold(
        question_type="yesno",
        documents=(PUBMED + "1", PUBMED + "1"),
        snippets=(Snippet(PUBMED + "1", "Aspirin is", "sections.0", "sections.0", 0, 9),),
        concepts=("http://ex.org/concept/aspirin",),
        yesno="Yes.",
        ideal_answers=("Yes, it is.", "Aspirin is an NSAID."),
    )
    assert any("triples" in w.message for w in dataset.warnings)


@pytest.mark.parametrize(
    ("question", "yesno", "entities"),
    [
        (
            {"type": "factoid", "exact_answer": [["IL-6", "interleukin 6"], ["TNF"]]},
            None,
            (("IL-6", "interleukin 6"), ("TNF",)),
        ),
        ({"type": "factoid", "exact_answer": ["BRCA1", "TP53"]}, None, (("BRCA1",), ("TP53",))),
        ({"type": "factoid", "exact_answer": "BRCA1"}, None, (("BRCA1",),)),
        (
            {"type": "list", "exact_answer": [["liver"], ["kidney", "ren"]]},
            None,
            (("liver",), ("kidney", "ren")),
        ),
        ({"type": "list", "exact_answer": [["a"], "b", []]}, None, (("a",), ("b",))),
        ({"type": "yesno", "exact_answer": "no"}, "no", ()),
        ({"type": "yesno", "exact_answer": ["yes"]}, "yes", ()),
        ({"type": "summary", "exact_answer": "ignored"}, None, ()),
        ({"exact_answer": "yes"}, "yes", ()),
        ({"type": "list"}, None, ()),
    ],
)
def test_exact_answer_shapes(
    question: dict[str, object], yesno: str | None, entities: tuple[tuple[str, ...], ...]
) -> None:
    part = gold(question)
    assert (part.yesno, part.entities) == (yesno, entities)


def test_ideal_answer_string_or_list_and_phase_a_responses(
    formats_parse: Callable[[str], Dataset],
) -> None:
    by_id = formats_parse("bioasq-edge.json").by_id()
    assert by_id["f1"].bioasq and by_id["f1"].bioasq.ideal_answers == ("IL-6.",)
    phase_a = by_id["a1"]
    assert phase_a.texts == ()
    assert phase_a.bioasq == BioasqGold("", documents=(PUBMED + "2",))


@pytest.mark.parametrize(
    ("question", "where"),
    [
        ({"type": "yesno", "exact_answer": ["yes", "no"]}, "$.questions[0].exact_answer"),
        ({"type": "list", "exact_answer": [[1]]}, "$.questions[0].exact_answer[0][0]"),
        ({"documents": "http://x"}, None),
        ({"documents": [1]}, "$.questions[0].documents[0]"),
        ({"snippets": [{"document": "d"}]}, "missing required field 'offsetInBeginSection'"),
        (
            {"snippets": [{"document": "d", "offsetInBeginSection": 1.5, "offsetInEndSection": 2}]},
            "snippets[0].offsetInBeginSection",
        ),
        ({"body": ["b"]}, "$.questions[0].body"),
        ({"id": 3.5}, "$.questions[0].id"),
    ],
)
def test_wrong_types_are_errors_with_a_path(question: dict[str, object], where: str | None) -> None:
    if where is None:  # a single document string is accepted as a one-item list
        assert gold(question).documents == ("http://x",)
        return
    with pytest.raises(DatasetFormatError) as caught:
        parse_bytes(bioasq(question), source="b.json", format=SourceFormat.BIOASQ)
    assert where in str(caught.value)


def test_string_offsets_are_read_with_a_warning() -> None:
    doc = bioasq(
        {"snippets": [{"document": "d", "offsetInBeginSection": "3", "offsetInEndSection": 7}]}
    )
    dataset = parse_bytes(doc, source="b.json")
    (q,) = dataset.questions
    assert q.bioasq and q.bioasq.snippets[0].offset_begin == 3
    assert any("offsets written as strings" in w.message for w in dataset.warnings)
