"""The TEXT2SPARQL'26 evaluation (``text2sparql-2026``): the published 2026 files to the last digit.

Per question the 2026 rules are the 2025 ones; the averages change per language. Every published
``*_results.json`` of the eight systems is rebuilt from its own per-question values; the
per-question values of SPARQL-LLM, IRIS and LIBER-AI-QWEN are rebuilt from their published
result sets (the excerpts kept in ``tests/data/text2sparql-2026``); and the 2025 result sets
scored under the 2026 profile keep their 2025 per-question values.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import replace

import pytest

from evaluators.errors import DatasetFormatError
from evaluators.formats import parse_bytes, parse_file
from evaluators.formats.text2sparql.gold import with_gold_results
from evaluators.model import Dataset
from evaluators.qa import text2sparql, text2sparql_file
from evaluators.qa.scoring import evaluate
from tests.plugins.formats import EXCERPT_SYSTEMS, SYSTEMS_2026, T2s26Files, T2sFiles

RULES_2026 = text2sparql_file.RULES[text2sparql_file.OFFICIAL_2026]


def _rows(doc: dict[str, dict[str, float]]) -> list[text2sparql_file.Row]:
    """The per-question values of a published file, language from the qname's ``-<lang>``."""
    ids = {"set_P": "set_p", "set_recall": "set_recall", "set_F": "set_f", "ndcg": "ndcg"}
    return [
        text2sparql_file.Row(q, q.rsplit("-", 1)[1], {ids[k]: v for k, v in values.items()})
        for q, values in doc.items()
        if not q.startswith("average")
    ]


def test_every_published_2026_evaluation_from_its_per_question_values(t2s26: T2s26Files) -> None:
    files = t2s26.all_results()
    assert len(files) == 19  # 8 systems x 2 datasets, and IRIS's, B's and C's other DB26 runs
    systems = {f.parent.name for f in files}
    assert systems == set(SYSTEMS_2026)
    for path in files:
        published = json.loads(path.read_text())
        rebuilt = text2sparql_file.evaluation_document(_rows(published), RULES_2026)
        assert rebuilt == published, path  # every qname, every average, every digit
        assert len(published) == 103  # 100 qnames, average and one object per language


def test_the_2025_rule_and_the_clients_code_give_other_english_numbers(t2s26: T2s26Files) -> None:
    published = json.loads(t2s26.results("ck26", "INFAI-ETI-AND-FRIENDS-A").read_text())
    english = [r for r in _rows(published) if r.language == "en"]
    heads = [text2sparql_file.headline_value(r.values) for r in english]
    assert published["average-en"]["set_F_ndcg"] == 0.6409228008399851  # n_lang + 1 values
    assert statistics.fmean(heads) == 0.6437412568567847  # 2025: n_lang values
    # text2sparql-client 2.1.x combines over every entry of its results, averages included
    everything = [v.get("ndcg", v["set_F"]) for v in published.values()]
    assert statistics.fmean(everything) == 0.6325583851324144


@pytest.mark.parametrize("system", EXCERPT_SYSTEMS)
@pytest.mark.parametrize("dataset", ["ck26", "db26"])
def test_published_per_question_values_from_the_published_result_sets(
    system: str, dataset: str, t2s26: T2s26Files, ck26_gold: Dataset, db26_gold: Dataset
) -> None:
    answers = parse_file(t2s26.predictions(dataset, system)).by_id()
    excerpt = ck26_gold if dataset == "ck26" else db26_gold
    # the client scores the qnames of the system's result set (the excerpt's)
    gold = replace(excerpt, questions=tuple(q for q in excerpt.questions if q.id in answers))
    result = evaluate(gold, answers, profile=text2sparql_file.OFFICIAL_2026, language="mul")
    mine = text2sparql.evaluation_json(result, gold)
    assert mine is not None
    published = json.loads(t2s26.results(dataset, system).read_text())
    scored = [q for q in mine if not q.startswith("average")]
    assert len(scored) == {"ck26": 22, "db26": 20 if system == "IRIS" else 28}[dataset]
    assert all(mine[q] == published[q] for q in scored)
    assert set(mine) == {*scored, "average", "average-en", "average-" + scored[1][-2:]}


def test_ck26_and_db26_load_with_their_languages_and_ordered_questions(t2s26: T2s26Files) -> None:
    ck26, db26 = parse_file(t2s26.questions("ck26")), parse_file(t2s26.questions("db26"))
    assert (len(ck26.questions), len(db26.questions)) == (100, 100)
    assert not ck26.warnings and not db26.warnings
    assert [q.id for q in ck26.questions[:2]] == ["ck26:1-en", "ck26:1-de"]
    assert {q.languages[0] for q in db26.questions} == {"en", "es"}
    ordered = [q.id for q in ck26.questions if q.text2sparql and q.text2sparql.order_matters]
    assert ordered == ["ck26:27-en", "ck26:27-de", "ck26:37-en", "ck26:37-de"]
    assert not any(q.text2sparql and q.text2sparql.order_matters for q in db26.questions)
    assert ck26.questions[1].text("de") == "Zu welcher Abteilung gehört Frau Brant?"
    assert ck26.questions[0].text2sparql.dataset == "https://text2sparql.aksw.org/2026/corporate/"  # type: ignore[union-attr]


def _questions(*ordered: int) -> bytes:
    entries = "".join(
        f"  - id: {n}\n    question: {{en: Q{n}?}}\n    query: {{sparql: 'ASK {{}}'}}\n"
        + ("    features: [RESULT_ORDER_MATTERS]\n" if n in ordered else "")
        for n in (1, 2)
    )
    return b"dataset:\n  id: https://ex.org/c/\n  prefix: ex\nquestions:\n" + entries.encode()


def test_order_required_decides_which_answers_are_ordered_and_says_where_it_differs() -> None:
    questions = parse_bytes(_questions(1), source="q.yml")
    results = parse_bytes(
        json.dumps(
            {"ex:1-en": {"a": 1}, "ex:2-en": {"b": 1}, "order_required": ["ex:2-en"]}
        ).encode(),
        source="r.json",
    )
    gold = with_gold_results(questions, results, source="r.json")
    ordered = {q.id: q.text2sparql.order_matters for q in gold.questions}  # type: ignore[union-attr]
    assert ordered == {"ex:1-en": False, "ex:2-en": True}
    assert sorted(w.question_id or "" for w in gold.warnings) == ["ex:1-en", "ex:2-en"]
    assert "order_required" in gold.warnings[0].message
    same = with_gold_results(parse_bytes(_questions(2), source="q.yml"), results, source="r.json")
    assert not same.warnings  # the file and the result set agree
    without = parse_bytes(b'{"ex:1-en": {"a": 1}, "ex:2-en": {"b": 1}}', source="r.json")
    kept = with_gold_results(questions, without, source="r.json")
    assert [q.text2sparql.order_matters for q in kept.questions] == [True, False]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("order_required", "message"),
    [
        ('["ex:3-en"]', "has no result in the file"),
        ('["ex:1-en", "ex:1-en"]', "listed twice"),
        ('"ex:1-en"', "expected a list"),
        ("[1]", "expected a qname"),
    ],
)
def test_a_broken_order_required_is_refused(order_required: str, message: str) -> None:
    data = f'{{"ex:1-en": {{"a": 1}}, "order_required": {order_required}}}'.encode()
    with pytest.raises(DatasetFormatError, match=message):
        parse_bytes(data, source="r.json")


@pytest.mark.parametrize(
    ("system", "dataset"), [("WSE", "ck25"), ("LACODAM", "ck25"), ("IIS-Q", "db25")]
)  # every published 2025 result set
def test_2025_result_sets_under_the_2026_rules(
    system: str, dataset: str, t2s_files: T2sFiles, ck25_gold: Dataset, db25_gold: Dataset
) -> None:
    gold = ck25_gold if dataset == "ck25" else db25_gold
    answers = parse_file(t2s_files.result(system, dataset, "system_result_set")).by_id()
    result = evaluate(gold, answers, profile=text2sparql_file.OFFICIAL_2026, language="mul")
    mine = text2sparql.evaluation_json(result, gold)
    assert mine is not None
    published = json.loads(t2s_files.result(system, dataset, "eval").read_text())
    qnames = [q for q in published if q != "average"]
    assert len(qnames) == len(gold.questions) and all(mine[q] == published[q] for q in qnames)
    overall = {k: v for k, v in published["average"].items() if "-" not in k}
    assert mine["average"] == overall  # the same overall rules
    languages = sorted(k.removeprefix("average-") for k in mine if k.startswith("average-"))
    assert languages == ([] if dataset == "ck25" else ["en", "es"])
    for language in languages:
        part = [r for r in _rows(published) if r.language == language]
        heads = [text2sparql_file.headline_value(r.values) for r in part]
        ndcg = statistics.fmean(r.values["ndcg"] for r in part if "ndcg" in r.values)
        got = mine[f"average-{language}"]
        assert got["set_F"] == published["average"][f"set_F-{language}"]
        assert got["set_F_ndcg"] == statistics.fmean([*heads, ndcg])
        assert got["set_F_ndcg"] != published["average"][f"set_F_ndcg-{language}"]


def test_the_kept_files_are_where_the_readme_says(t2s26: T2s26Files) -> None:
    readme = (t2s26.root / "README.md").read_text()
    kept = [p for p in t2s26.root.rglob("*") if p.is_file() and p.name != "README.md"]
    assert len(kept) == 30
    missing = [p for p in kept if str(p.relative_to(t2s26.root)) not in readme]
    assert missing == []
    assert "CC BY-SA 4.0" in readme
