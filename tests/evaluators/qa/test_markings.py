"""Markings from SPARQL queries in the strict and the GERBIL-compatible mode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyoxigraph import Literal, NamedNode

from evaluators.knowledge.endpoint import with_known_prefixes
from evaluators.qa.markings import (
    MarkingMode,
    Relation,
    gerbil_text_rewrite,
    query_markings,
)

DBO = "http://dbpedia.org/ontology/"
DBR = "http://dbpedia.org/resource/"
TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
GERBIL = MarkingMode.GERBIL
STRICT = MarkingMode.STRICT
PREFIXES = f"PREFIX dbo: <{DBO}> PREFIX dbr: <{DBR}> "


def test_re2kb_gold_relations_of_gerbils_test_dataset(shared_data: Path) -> None:
    data = shared_data / "systems/dice-group_gerbil/src/test/resources/datasets/QALD_test3.json"
    sparql = json.loads(data.read_text())["questions"][0]["query"]["sparql"]
    m = query_markings(sparql, GERBIL)
    assert m.relations == (
        Relation(None, TYPE, NamedNode(DBO + "City")),
        Relation(None, TYPE, NamedNode(DBO + "Town")),
        Relation(None, DBO + "country", NamedNode(DBR + "Germany")),
        Relation(None, DBO + "populationTotal", None),
    )
    # GERBIL's rdf:type quirk: a property, its classes resources, no answer item types
    assert m.properties.count(TYPE) == 2
    assert set(m.resources) == {DBO + "City", DBO + "Town", DBR + "Germany"}
    assert m.answer_item_types == ()
    strict = query_markings(sparql, STRICT)
    assert strict.answer_item_types == (DBO + "City", DBO + "Town")
    assert TYPE not in strict.properties
    assert strict.resources == (DBR + "Germany",)


def test_gerbil_mode_stops_at_the_first_property_path() -> None:
    q = PREFIXES + "SELECT ?x WHERE { dbr:S dbo:a ?x . dbr:T dbo:a/dbo:b ?y . ?x dbo:c dbr:U }"
    m = query_markings(q, GERBIL)
    # the subject of the path triple is recorded before the walk throws, the rest is lost
    assert m.resources == (DBR + "S", DBR + "T")
    assert m.properties == (DBO + "a",)
    assert m.problem is not None
    strict = query_markings(q, STRICT)
    assert strict.properties == (DBO + "a", DBO + "b", DBO + "c")
    assert Relation(None, DBO + "c", NamedNode(DBR + "U")) in strict.relations


def test_gerbil_mode_stops_at_a_variable_predicate() -> None:
    q = PREFIXES + "SELECT ?x WHERE { ?x ?p dbr:A . ?x dbo:b dbr:B }"
    assert query_markings(q, GERBIL).relations == ()
    strict = query_markings(q, STRICT)
    assert Relation(None, None, NamedNode(DBR + "A")) in strict.relations
    assert strict.properties == (DBO + "b",)


def test_strict_property_paths_become_relations() -> None:
    q = PREFIXES + "SELECT ?x WHERE { ?x dbo:a/^dbo:b dbr:Z . ?x (dbo:c|dbo:d)* ?y . ?x !dbo:e ?w }"
    m = query_markings(q, STRICT)
    assert m.relations[:2] == (
        Relation(None, DBO + "a", None),
        Relation(NamedNode(DBR + "Z"), DBO + "b", None),
    )
    assert m.relations[2].predicate == f"(<{DBO}c>|<{DBO}d>)*"
    assert m.properties == (DBO + "a", DBO + "b", DBO + "c", DBO + "d")  # negated sets name nothing


def test_gerbil_mode_keeps_duplicates_and_strict_drops_them() -> None:
    q = PREFIXES + "SELECT ?x WHERE { { ?x dbo:a dbr:A } UNION { ?x dbo:a dbr:A } }"
    assert query_markings(q, GERBIL).resources == (DBR + "A", DBR + "A")
    assert query_markings(q, STRICT).resources == (DBR + "A",)


def test_filters_count_in_strict_mode_only() -> None:
    q = PREFIXES + "SELECT ?x WHERE { ?x dbo:a ?y FILTER NOT EXISTS { ?x dbo:b dbr:B } }"
    assert query_markings(q, GERBIL).properties == (DBO + "a",)
    assert query_markings(q, STRICT).properties == (DBO + "a", DBO + "b")


def test_subselects_and_optionals_are_visited() -> None:
    q = PREFIXES + (
        "SELECT ?x WHERE { OPTIONAL { ?x dbo:a dbr:A } { SELECT ?x WHERE { ?x dbo:b 5 } } "
        "MINUS { ?x dbo:c 'EN' } }"
    )
    m = query_markings(q, GERBIL)
    assert m.properties == (DBO + "a", DBO + "b", DBO + "c")
    assert m.relations[1] == Relation(None, DBO + "b", Literal("5"))
    assert m.relations[2] == Relation(None, DBO + "c", Literal("EN"))


def test_undeclared_prefixes_fail_in_gerbil_mode_and_are_supplied_in_strict_mode() -> None:
    q = "SELECT ?x WHERE { ?x dbo:a res:B }"
    gerbil = query_markings(q, GERBIL)
    assert gerbil.relations == () and "undeclared prefix" in (gerbil.problem or "")
    strict = query_markings(q, STRICT)
    assert strict.resources == (DBR + "B",) and strict.problem is None
    declared = "PREFIX dbo: <http://example.org/> SELECT ?x WHERE { ?x dbo:a ?y }"
    assert query_markings(declared, STRICT).properties == ("http://example.org/a",)


@pytest.mark.parametrize("sparql", [None, "", "SELECT WHERE {", "not sparql at all"])
def test_unparsable_queries_give_no_markings_and_a_problem(sparql: str | None) -> None:
    for mode in MarkingMode:
        m = query_markings(sparql, mode)
        assert (m.resources, m.properties, m.relations) == ((), (), ())
        assert m.problem


def test_answer_item_types_need_a_projected_subject() -> None:
    city = f"<{DBO}City>"
    assert query_markings(f"SELECT ?c WHERE {{ ?c a {city} }}").answer_item_types == (DBO + "City",)
    assert query_markings(f"SELECT * WHERE {{ ?c a {city} }}").answer_item_types == (DBO + "City",)
    counted = query_markings(f"SELECT (COUNT(?c) AS ?n) WHERE {{ ?c a {city} }}")
    assert counted.answer_item_types == () and counted.resources == (DBO + "City",)
    asked = query_markings(f"ASK {{ ?c a {city} }}")
    assert asked.answer_item_types == () and TYPE in asked.properties


def test_wikidata_instance_of_gives_answer_item_types_in_strict_mode_only() -> None:
    human = "http://www.wikidata.org/entity/Q5"
    direct = "SELECT ?p WHERE { ?p wdt:P31 wd:Q5 ; wdt:P27 wd:Q183 }"
    m = query_markings(direct)
    assert m.answer_item_types == (human,) and human not in m.resources
    assert m.properties == ("http://www.wikidata.org/prop/direct/P27",)
    # the Wikidata idiom "instance of a subclass of"
    chained = query_markings("SELECT ?c WHERE { ?c wdt:P31/wdt:P279* wd:Q515 }")
    assert chained.answer_item_types == ("http://www.wikidata.org/entity/Q515",)
    # subclass alone, or an unprojected subject, is no answer item type
    assert query_markings("SELECT ?c WHERE { ?c wdt:P279 wd:Q515 }").answer_item_types == ()
    assert query_markings("ASK { wd:Q64 wdt:P31 wd:Q515 }").answer_item_types == ()
    declared = "PREFIX wd: <http://www.wikidata.org/entity/> "
    declared += "PREFIX wdt: <http://www.wikidata.org/prop/direct/> " + direct
    assert query_markings(declared, GERBIL).answer_item_types == ()


def test_qald_wikidata_data_gets_answer_item_types(shared_data: Path) -> None:
    from evaluators.formats import parse_file
    from evaluators.qa.scoring import evaluate, gold_as_answers

    path = shared_data / "qald/dice-group_MST5/datasets/qald9plus/qald_9_pp_test_wikidata_new.json"
    dataset = parse_file(path)
    typed = [q.id for q in dataset.questions if query_markings(q.sparql).answer_item_types]
    assert (len(dataset.questions), len(typed)) == (136, 27)
    result = evaluate(dataset, gold_as_answers(dataset), bootstrap_samples=0)
    ait = result.get("AIT2KB")
    assert ait is not None and ait.value("macro_f1") == 1.0


def test_hybrid_text_predicates_are_rewritten_like_gerbil() -> None:
    q = PREFIXES + 'SELECT ?n WHERE { dbr:Croissant dbo:creator ?x . ?x text:"founder of" ?n . }'
    rewritten = gerbil_text_rewrite(q)
    assert '?text0 <http://okbqa.org/text#query> "founder of" .' in rewritten
    m = query_markings(q, GERBIL)
    assert m.relations[0] == Relation(None, "http://okbqa.org/text#query", Literal("founder of"))
    assert m.relations[1] == Relation(NamedNode(DBR + "Croissant"), DBO + "creator", None)
    assert m.problem  # ?x ?text0 ?n has a variable predicate


def test_known_prefixes_are_prepended_unless_declared() -> None:
    text = with_known_prefixes("PREFIX dbo: <http://x/> ASK { ?a dbo:b ?c }")
    assert "PREFIX dbo: <http://dbpedia.org/ontology/>" not in text
    assert "PREFIX res: <http://dbpedia.org/resource/>" in text


def test_every_qald9_query_gives_markings_without_crashing(shared_data: Path) -> None:
    data = json.loads(
        (shared_data / "qald/ag-sc_QALD/9/data/qald-9-test-multilingual.json").read_text()
    )
    queries = [q["query"].get("sparql") for q in data["questions"]]
    assert len(queries) == 150
    parsed = sum(1 for q in queries if not query_markings(q, STRICT).problem)
    assert parsed >= 140  # ten QALD-9 test queries are Virtuoso-only syntax
