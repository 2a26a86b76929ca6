"""The query language checker, broadening and question-to-query rewriting (pure)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag.errors import QuerySyntaxError
from rag.retrieval.index import QUERY_FIELDS, STOP_WORD_LIST
from rag.retrieval.query import broadened, check_query, content_words

VALID = [
    "aspirin",
    '"heart attack" AND aspirin',
    '("heart attack" OR "myocardial infarction") AND (aspirin OR clopidogrel)',
    "heart NOT lung",
    "+aspirin -bleeding infarction",
    "title:aspirin abstract:bleeding",
    'title:"heart attack"',
    "mesh:(aspirin OR famotidine)",
    "year:[2000 TO 2010]",
    "cardio*",
    "te?t",
    "famotadine~",
    "famotadine~2",
    "famotadine~1/3",
    '"heart attack"~3',
    '"heart attack"^2 aspirin^0.5',
    "H2-receptor antagonist",
    "COVID-19 treatment",
    "(a OR b) AND NOT c",
    "NOT(lung) heart",
]


@pytest.mark.parametrize("query", VALID)
def test_valid_queries_pass_the_check(query: str) -> None:
    assert check_query(query, QUERY_FIELDS)


MALFORMED = [
    # (query, 0-based position, fragment of the message)
    ("", 0, "empty"),
    ("   ", 0, "empty"),
    ("(heart OR lung", 0, "unclosed '('"),
    ("heart (lung AND (kidney)", 6, "unclosed '('"),
    ("heart) lung", 5, "unmatched ')'"),
    ('"heart attack', 0, "unterminated phrase"),
    ('aspirin "heart attack', 8, "unterminated phrase"),
    ('aspirin ""', 8, "empty phrase"),
    ("heart AND", 6, "'AND' needs a term after it"),
    ("AND heart", 0, "'AND' needs a term before it"),
    ("heart AND OR lung", 10, "'OR' needs a term before it after 'AND'"),
    ("heart NOT", 6, "'NOT' needs a term after it"),
    ("(heart OR) lung", 7, "'OR' needs a term after it"),
    ("heart ()", 6, "empty group"),
    ("titel:heart", 0, "unknown field 'titel'"),
    ("aspirin Title:heart", 8, "unknown field 'Title'"),
    ("title: heart", 0, "needs a term after it"),
    ("heart^x", 5, "boost"),
    ("^2 heart", 0, "boost"),
    ("heart~x", 5, "fuzzy"),
    ("~ heart", 0, "fuzzy"),
    ("+ heart", 0, "'+' must be followed directly by a term"),
    ("heart -", 6, "'-' must be followed directly by a term"),
    ("year:[2000 2010]", 5, "needs 'TO'"),
    ("year:[2000 TO 2010", 5, "unclosed range"),
    ("heart *", 6, "wildcard"),
    ("NOT lung", 0, "only excludes"),
    ("-lung -kidney", 0, "only excludes"),
    ('"heart attack"x', 14, "unexpected 'x' after a phrase"),
]


@pytest.mark.parametrize(("query", "position", "fragment"), MALFORMED)
def test_malformed_queries_raise_with_position(query: str, position: int, fragment: str) -> None:
    with pytest.raises(QuerySyntaxError) as caught:
        check_query(query, QUERY_FIELDS)
    assert caught.value.position == position
    assert fragment in caught.value.detail
    assert f"column {position + 1}" in str(caught.value)
    # the caret line points at the position
    assert str(caught.value).splitlines()[-1] == "  " + " " * position + "^"


def test_malformed_table_covers_every_case() -> None:
    assert len(MALFORMED) == 29


BROADENED = [
    ('"heart attack" AND aspirin', "heart attack aspirin"),
    ("+aspirin -bleeding infarction", "aspirin infarction"),
    ("heart NOT lung", "heart"),
    ("heart AND NOT (lung OR kidney) liver", "heart liver"),
    ("heart ANDNOT lung", "heart"),
    ('title:"heart attack"~2^3 mesh:aspirin', "title:heart title:attack mesh:aspirin"),
    ("(heart AND lung) OR (kidney AND NOT liver)", "(heart lung) (kidney)"),
    ("(NOT liver) heart", "heart"),
    ("cardio* famotadine~ aspirin^2", "cardio* famotadine~ aspirin^2"),
    ("year:[2000 TO 2010] AND heart", "year:[2000 TO 2010] heart"),
]


@pytest.mark.parametrize(("query", "expected"), BROADENED)
def test_broadened_drops_phrases_requirements_and_exclusions(query: str, expected: str) -> None:
    result = broadened(check_query(query, QUERY_FIELDS))
    assert result == expected
    # a broadened query is itself a valid query
    check_query(result, QUERY_FIELDS)


def test_content_words_drop_stop_words_question_words_and_syntax() -> None:
    question = 'What is the role of BRCA1 AND "TP53" in breast-cancer? (title:x) NOT, e.g.'
    assert content_words(question, STOP_WORD_LIST) == "role brca1 tp53 breast cancer title x e.g"


def test_content_words_of_a_stop_word_question_is_empty() -> None:
    assert content_words("What is it? Is it?", STOP_WORD_LIST) == ""


@given(st.text(max_size=80))
def test_content_words_always_give_a_valid_query_or_nothing(text: str) -> None:
    query = content_words(text, STOP_WORD_LIST)
    if query:
        assert check_query(query, QUERY_FIELDS)
