"""URI and literal normalisation: GERBIL's string tests and sameAs variants, strict keys."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyoxigraph import Literal, NamedNode

from evaluators.qa.normalisation import (
    display,
    gerbil_uri_variants,
    is_gerbil_iri,
    is_url,
    literal_key,
    uri_key,
    value_key,
)
from vocab.standard import XSD

DBR = "http://dbpedia.org/resource/"


@pytest.mark.parametrize(
    ("text", "iri", "url"),
    [
        ("http://dbpedia.org/resource/Berlin", True, True),
        ("https://www.wikidata.org/entity/Q42", True, True),
        ("http://kb.com/1", True, True),
        ("urn:isbn:0451450523", True, False),
        ("5", False, False),
        ("1961-08-04", False, False),
        ("1961-08-04T00:00:00Z", False, False),
        ("10:30", False, False),
        ("Croissant@en", False, False),
        ("Paris", False, False),
        ("http://localhost/x", True, False),
        ("http://dbpedia.org/resource/Café", True, False),
        ("http://x.org/a b", False, False),
    ],
)
def test_gerbil_string_classification(text: str, iri: bool, url: bool) -> None:
    assert is_gerbil_iri(text) is iri
    assert is_url(text) is url


@pytest.mark.parametrize(
    ("uri", "variant"),
    [
        # GERBIL's UriEncodingHandlingSameAsRetriever tests
        (DBR + "Gainesville,_Florida", DBR + "Gainesville%2C_Florida"),
        (DBR + "Gainesville%2C_Florida", DBR + "Gainesville,_Florida"),
        (
            DBR + "Richard_Taylor_(British_politician)",
            DBR + "Richard_Taylor_%28British_politician%29",
        ),
        # WikiDbPediaBridging tests
        (DBR + "China", "http://en.wikipedia.org/wiki/China"),
        ("http://en.wikipedia.org/wiki/China", DBR + "China"),
        ("http://de.dbpedia.org/resource/China", "http://de.wikipedia.org/wiki/China"),
        # ErrorFixing, and https reaching http through the bridge
        ("http://en.dbpedia.org/resource/China", DBR + "China"),
        ("https://dbpedia.org/resource/China", DBR + "China"),
    ],
)
def test_gerbil_static_sameas_variants(uri: str, variant: str) -> None:
    assert variant in gerbil_uri_variants(uri)


def test_gerbil_variants_add_nothing_for_plain_names_and_not_for_wikidata() -> None:
    assert gerbil_uri_variants(DBR + "Berlin") == {
        DBR + "Berlin",
        "http://en.wikipedia.org/wiki/Berlin",
    }
    wd = "https://www.wikidata.org/entity/Q42"
    assert "http://www.wikidata.org/entity/Q42" not in gerbil_uri_variants(wd)
    assert gerbil_uri_variants("http://data.nytimes.com/N1") == frozenset()


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("https://dbpedia.org/resource/Berlin", DBR + "Berlin"),
        (DBR + "Gainesville%2C_Florida", DBR + "Gainesville,_Florida"),
        ("https://en.wikipedia.org/wiki/Berlin", DBR + "Berlin"),
        ("http://de.wikipedia.org/wiki/Berlin", "http://de.dbpedia.org/resource/Berlin"),
        ("http://en.dbpedia.org/resource/Berlin", DBR + "Berlin"),
        ("https://www.wikidata.org/wiki/Q42", "http://www.wikidata.org/entity/Q42"),
        ("https://www.wikidata.org/entity/Q42", "http://www.wikidata.org/entity/Q42"),
        ("https://www.wikidata.org/wiki/Property:P31", "http://www.wikidata.org/entity/P31"),
        ("HTTP://DBPEDIA.ORG/resource/Berlin", DBR + "Berlin"),
    ],
)
def test_uri_key_unifies_equivalent_forms(a: str, b: str) -> None:
    assert uri_key(a) == uri_key(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (DBR + "Berlin", DBR + "berlin"),
        (DBR + "Berlin", "http://de.dbpedia.org/resource/Berlin"),
        ("http://www.wikidata.org/entity/Q42", "http://www.wikidata.org/prop/direct/Q42"),
        ("urn:a", "urn:b"),
    ],
)
def test_uri_key_keeps_different_resources_apart(a: str, b: str) -> None:
    assert uri_key(a) != uri_key(b)


@pytest.mark.parametrize(
    ("a", "a_type", "b", "b_type"),
    [
        ("8", None, "8.0", None),
        ("8", XSD.integer.value, "8.00", XSD.decimal.value),
        ("1.5E3", XSD.double.value, "1500", None),
        ("-0", None, "0", None),
        ("1961-08-04", None, "1961-08-04T00:00:00Z", None),
        ("1961-08-04", XSD.date.value, "1961-08-04T00:00:00", XSD.dateTime.value),
        ("1993-6-8", None, "1993-06-08", None),
        ("2010-01-01T12:00:00+02:00", None, "2010-01-01T10:00:00Z", None),
        ("True", None, "true", XSD.boolean.value),
        ("1", XSD.boolean.value, "true", None),
        ("Caf\u00e9", None, "Cafe\u0301", None),
    ],
)
def test_literal_key_equal_values(a: str, a_type: str | None, b: str, b_type: str | None) -> None:
    assert literal_key(a, a_type) == literal_key(b, b_type)


@pytest.mark.parametrize(
    ("a", "b"),
    [("8", "9"), ("1961-08-04", "1961-08-05"), ("true", "false"), ("Paris", "paris"), ("8", "8a")],
)
def test_literal_key_different_values(a: str, b: str) -> None:
    assert literal_key(a) != literal_key(b)


def test_a_url_string_compares_as_a_resource() -> None:
    assert value_key(Literal("https://dbpedia.org/resource/Berlin")) == value_key(
        NamedNode(DBR + "Berlin")
    )
    assert value_key(Literal("x y", datatype=XSD.anyURI))[0] == "iri"
    assert value_key(Literal("Berlin", language="en")) == ("str", "Berlin")


def test_display_forms() -> None:
    assert display(NamedNode(DBR + "Berlin")) == DBR + "Berlin"
    assert display(Literal("x")) == "x"
    assert display(Literal("x", language="de")) == '"x"@de'


@given(st.integers(-(10**12), 10**12))
def test_integers_and_their_decimal_forms_share_a_key(n: int) -> None:
    assert literal_key(str(n)) == literal_key(f"{n}.0", XSD.decimal.value)


@given(st.text(min_size=1, max_size=30))
def test_keys_never_crash_and_are_deterministic(text: str) -> None:
    assert literal_key(text) == literal_key(text)
    assert uri_key("http://example.org/" + text) == uri_key("http://example.org/" + text)
