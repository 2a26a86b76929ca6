"""Pure parts of the answering pipeline: citations, verbatim matching, parsing, question types."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag.answering.citations import AnswerSentence, check_citations
from rag.answering.exact import ExactAnswer, extractive_exact, parse_exact, question_type
from rag.answering.extraction import locate, normalised
from rag.answering.snippets import Snippet
from rag.models.prompts import examples, expansion_messages, json_value, marked_query
from rag.retrieval.index import QUERY_FIELDS
from rag.retrieval.query import check_query

ALLOWED = {"111", "222", "333", "444", "http://dbpedia.org/resource/Berlin"}

# (answer as written, [(sentence text, kept citations, removed citations)])
CITATION_CASES = [
    ("Alpha [111].", [("Alpha.", ("111",), ())]),
    ("Alpha [111, 222].", [("Alpha.", ("111", "222"), ())]),
    ("Alpha [111; 999].", [("Alpha.", ("111",), ("999",))]),
    ("Alpha [PMID: 111, PMID 222].", [("Alpha.", ("111", "222"), ())]),
    ("Alpha [111](https://pubmed.ncbi.nlm.nih.gov/111/).", [("Alpha.", ("111",), ())]),
    ("Alpha [https://pubmed.ncbi.nlm.nih.gov/222/].", [("Alpha.", ("222",), ())]),
    ("Alpha [111] [222].", [("Alpha.", ("111", "222"), ())]),
    ("Alpha [111, 222, 333, 444].", [("Alpha.", ("111", "222", "333"), ("444",))]),
    ("Alpha [111, 111].", [("Alpha.", ("111",), ())]),
    ("Alpha. [111] Beta [222].", [("Alpha.", ("111",), ()), ("Beta.", ("222",), ())]),
    ("Alpha. Beta.", [("Alpha.", (), ()), ("Beta.", (), ())]),
    ("The poly[A] tail matters [111].", [("The poly[A] tail matters.", ("111",), ())]),
    ("Alpha [999]. [111]", [("Alpha.", ("111",), ("999",))]),
    ("[111] only citations.", [("only citations.", ("111",), ())]),
    (
        "Berlin [http://dbpedia.org/resource/Berlin].",
        [("Berlin.", ("http://dbpedia.org/resource/Berlin",), ())],
    ),
    ("", []),
]


@pytest.mark.parametrize(("raw", "expected"), CITATION_CASES)
def test_citations_are_checked_per_sentence(
    raw: str, expected: list[tuple[str, tuple[str, ...], tuple[str, ...]]]
) -> None:
    answer = check_citations(raw, ALLOWED)
    assert [(s.text, s.citations, s.removed) for s in answer.sentences] == expected


def test_citation_table_size() -> None:
    assert len(CITATION_CASES) == 16


def test_flagged_sentences_render_without_brackets() -> None:
    answer = check_citations("Kept [111]. Removed [999]. Bare.", ALLOWED)
    assert [s.flagged for s in answer.sentences] == [False, True, True]
    assert answer.text == "Kept [111]. Removed. Bare."
    assert answer.cited_pmids == ("111",) and answer.verified_sentences == 1


pmids = st.sampled_from(["111", "222", "333", "444", "555", "666", "99999999"])
words = st.text(alphabet="abcdefgh ", min_size=1, max_size=20).filter(lambda t: t.strip())


@given(st.lists(st.tuples(words, st.lists(pmids, max_size=5)), min_size=1, max_size=6))
def test_no_citation_outside_the_allowed_set_ever_survives(
    parts: list[tuple[str, list[str]]],
) -> None:
    raw = " ".join(
        f"{text.strip().capitalize()}" + (f" [{', '.join(ids)}]" if ids else "") + "."
        for text, ids in parts
    )
    answer = check_citations(raw, ALLOWED)
    for sentence in answer.sentences:
        assert set(sentence.citations) <= ALLOWED
        assert len(sentence.citations) <= 3
        assert sentence.flagged == (bool(sentence.removed) or not sentence.citations)
        rendered = sentence.rendered()
        assert ("[" in rendered) == bool(sentence.citations)
    for bad in ("555", "666", "99999999"):
        assert bad not in answer.text


@pytest.mark.parametrize(
    ("sentence", "section", "found"),
    [
        (
            "the heart rate recovered",
            "Lungs. The heart rate recovered.",
            "The heart rate recovered",
        ),
        (
            "Cafe-au-lait macules were counted",
            "Café-au-lait macules were counted.",
            "Café-au-lait macules were counted",
        ),
        (
            "mutations in  the\nLDLR gene",
            "Mutations in the LDLR gene cause FH.",
            "Mutations in the LDLR gene",
        ),
        ("the beta-catenin stain", "x", None),
        ("too short", "too short", None),
        ("e\u0301tude des cas", "Une e\u0301tude des cas.", "e\u0301tude des cas"),
    ],
)
def test_verbatim_sentences_map_back_to_original_offsets(
    sentence: str, section: str, found: str | None
) -> None:
    span = locate(sentence, section)
    if found is None:
        assert span is None
        return
    assert span is not None
    begin, end = span
    assert section[begin : end + 1] == found


@given(st.text(max_size=60))
def test_normalised_positions_point_into_the_original(text: str) -> None:
    form, origin = normalised(text)
    assert len(form) == len(origin)
    assert origin == sorted(origin)
    assert all(0 <= i < len(text) for i in origin)
    assert "  " not in form and form == form.strip()


def test_expansion_examples_are_valid_queries() -> None:
    shown = examples("expansion")
    assert len(shown) == 3
    for example in shown:
        check_query(str(example["query"]), QUERY_FIELDS)
    messages = expansion_messages("Does X cause Y?")
    assert messages[0].role == "system" and messages[-1].content.endswith("Does X cause Y?")
    assert len(messages) == 1 + 2 * 3 + 1


def test_every_example_file_loads() -> None:
    counts = {
        stage: len(examples(stage)) for stage in ("expansion", "extraction", "rerank", "answer")
    }
    assert counts == {"expansion": 3, "extraction": 1, "rerank": 1, "answer": 1}


@pytest.mark.parametrize(
    ("reply", "query"),
    [
        ("##a AND b##", "a AND b"),
        ("Sure.\n##(a OR\n b)##\nThanks", "(a OR b)"),
        ("####", None),
        ("a AND b", None),
        ("##a## and ##b##", "a"),
    ],
)
def test_marked_query_is_read_defensively(reply: str, query: str | None) -> None:
    assert marked_query(reply) == query


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ('{"a": 1}', {"a": 1}),
        ("```json\n[1, 2]\n```", [1, 2]),
        ('Answer: {"answer": "yes"} done', {"answer": "yes"}),
        ("{broken", None),
        ("no json", None),
    ],
)
def test_json_value_finds_the_first_json_value(reply: str, value: object) -> None:
    assert json_value(reply) == value


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Is thrombophilia related to miscarriage?", "yesno"),
        ("Are there DNMT3 proteins in plants?", "yesno"),
        ("Does aspirin help?", "yesno"),
        ("Which genes are mutated in familial hypercholesterolemia?", "list"),
        ("List the drugs used for migraine.", "list"),
        ("What is the gene mutated in cystic fibrosis?", "factoid"),
        ("Who discovered penicillin?", "factoid"),
        ("How many exons does the gene have?", "factoid"),
        ("What is the function of Irg1?", "summary"),
        ("Describe the mechanism of action of aspirin.", "summary"),
        ("Aspirin and bleeding", "summary"),
    ],
)
def test_question_type_from_wording(question: str, kind: str) -> None:
    assert question_type(question) == kind


def _snippet(text: str, score: float = 1.0) -> Snippet:
    return Snippet("d", text, "abstract", "abstract", 0, len(text) - 1, "1", 1, score, score)


def test_extractive_yes_no_weighs_the_evidence_about_the_claim() -> None:
    question = "Does aspirin reduce recurrent infarction?"
    against = [
        _snippet("Aspirin did not reduce recurrent infarction."),
        _snippet("Recurrent infarction was not reduced by aspirin in 1,204 patients."),
        _snippet("Aspirin reduced headache."),
    ]
    assert extractive_exact(question, "yesno", against).yesno == "no"
    # negation words that do not speak about the claim do not count against it
    supporting = [
        _snippet("Aspirin reduced recurrent infarction by a third."),
        _snippet("No bleeding was seen."),
        _snippet("Recurrent infarction was reduced with aspirin."),
    ]
    assert extractive_exact(question, "yesno", supporting).yesno == "yes"
    assert extractive_exact(question, "yesno", []).yesno == "yes"


def test_extractive_factoid_prefers_symbols_not_in_the_question() -> None:
    found = extractive_exact(
        "Which gene causes FH?",
        "factoid",
        [_snippet("Mutations in LDLR cause FH in most families.")],
    )
    assert found.entities[0] == ("LDLR",)
    assert extractive_exact("What is X?", "summary", [_snippet("X is Y.")]) == ExactAnswer(
        "summary"
    )


@pytest.mark.parametrize(
    ("kind", "reply", "expected"),
    [
        ("yesno", {"answer": "No"}, ExactAnswer("yesno", yesno="no")),
        ("yesno", {"answer": ["yes"]}, ExactAnswer("yesno", yesno="yes")),
        ("yesno", {"answer": "maybe"}, None),
        (
            "factoid",
            {"answer": ["a", "b", "c", "d", "e", "f"]},
            ExactAnswer("factoid", entities=(("a",), ("b",), ("c",), ("d",), ("e",))),
        ),
        ("list", {"answer": "single"}, ExactAnswer("list", entities=(("single",),))),
        ("list", {"answer": []}, None),
        ("list", "not a dict", ExactAnswer("list", entities=(("not a dict",),))),
        ("factoid", None, None),
    ],
)
def test_model_exact_answers_are_parsed_defensively(
    kind: str, reply: object, expected: ExactAnswer | None
) -> None:
    assert parse_exact(kind, reply) == expected


def test_answer_sentence_renders_citations_before_the_stop() -> None:
    assert AnswerSentence("Done!", ("1",)).rendered() == "Done [1]!"
    assert json.dumps(AnswerSentence("x").rendered()) == '"x"'
