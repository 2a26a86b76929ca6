"""The ``execution-em`` profile: FIRESPARQL's execution-based exact match, rule by rule, through
``qabench evaluate``'s path, and (slow) every published summary whose run is stored."""

from __future__ import annotations

from fractions import Fraction

import pytest

from bench.snapshot import Snapshot
from evaluators.evaluate import Evaluation, evaluate
from evaluators.formats import parse_bytes
from evaluators.formats.sciqa.gold import with_gold
from evaluators.model import Dataset, Execution
from evaluators.results import EvaluationResult
from evaluators.sciqa.execution_em import is_exact_match, result_rows
from tests import TEST_DATA

SCIQA = TEST_DATA / "sciqa"
RUN = (SCIQA / "firesparql-run.csv").read_bytes()
XSD = "http://www.w3.org/2001/XMLSchema#"


@pytest.mark.parametrize(
    ("system", "gold", "match"),
    [
        # datatype suffixes are cut; variable names (the header) do not count
        (f'?x\n"5"^^<{XSD}int>', '?y\n"5"', True),
        (f'?x\n"5"^^<{XSD}int>', f'?x\n"5"^^<{XSD}decimal>', True),
        # rows are a set: order and repeats do not count
        ("?x\n<a>\n<b>\n<a>", "?x\n<b>\n<a>", True),
        ("?x\n<a>", "?x\n<a>\n<b>", False),
        # cells are cut at tabs; a language tag is no datatype
        ('?x\t?y\n<a>\t"l"@en', '?x\t?y\n<a>\t"l"', False),
        # an empty result equals an empty or missing gold result
        ("?x", None, True),
        ("?x\n\n", "?x", True),
        # text without a header is read as rows, as FIRESPARQL does (the gold of a failed query)
        ("?x\nerror text", "error text", True),
        # each cell is cut at its first ^^
        ('?x\n"a^^b"^^<t>', '?x\n"a', True),
        # each line is stripped: a last empty cell (unbound) vanishes
        ("?x\t?y\n<a>\t", "?x\n<a>", True),
    ],
)
def test_rows_are_compared_as_firesparql_does(system: str, gold: str | None, match: bool) -> None:
    assert is_exact_match(Execution("SUCCESS", gold), Execution("SUCCESS", system)) is match


def test_only_a_query_that_ran_can_match() -> None:
    gold = Execution("SUCCESS", "?x\n<a>")
    assert not is_exact_match(gold, Execution("ERROR", "?x\n<a>"))
    assert not is_exact_match(gold, Execution("NULL"))
    assert not is_exact_match(gold, None)
    assert result_rows("?x\n<a>\t<b>") == frozenset({("<a>", "<b>")})


@pytest.fixture
def questions() -> Dataset:
    return parse_bytes((SCIQA / "questions.json").read_bytes(), source="questions.json")


def _score(gold: Dataset, answers: bytes = RUN, profile: str = "execution-em") -> EvaluationResult:
    return evaluate(gold, answers, Evaluation(profile=profile, label="sciqa-excerpt"))


def test_the_run_against_the_gold_it_recorded(questions: Dataset) -> None:
    gold = with_gold(questions, RUN, source="run.csv")
    qa = _score(gold).get("QA")
    assert qa is not None
    # SOURCE.md: AQ1475, AQ0176, AQ1059 and HQ0038 ran and match; AQ0392, AQ0021, HQ0022 did not run
    assert qa.value("successful") == 4 and qa.value("questions") == 7
    assert qa.value("em_successful") == 1.0
    assert qa.value("em_all") == pytest.approx(float(Fraction(4, 7)))
    rows = {s.question_id: s for s in qa.per_question}
    assert [rows[i].value("em") for i in ("AQ1475", "AQ0392", "AQ0021")] == [1.0, 0.0, 0.0]
    assert (
        rows["AQ1475"].gold
        == rows["AQ1475"].system
        == ('<http://orkg.org/orkg/resource/R117327>\t"GPT-3 175B (Few-Shot)"',)
    )
    assert rows["AQ0021"].reading == "NULL" and rows["AQ0021"].system == ()
    assert (rows["AQ0392"].reading or "").startswith("ERROR: Invalid SPARQL query")


def test_the_run_against_sciqa_s_own_gold(questions: Dataset) -> None:
    gold = with_gold(questions, (SCIQA / "answers.json").read_bytes(), source="answers.json")
    qa = _score(gold).get("QA")
    assert qa is not None
    # AQ0176's 2023 gold has a second row the system does not give
    assert (qa.value("successful"), qa.value("em_successful")) == (4, 0.75)
    assert qa.value("em_all") == pytest.approx(3 / 7)


def test_the_gold_system_matches_where_its_query_ran(questions: Dataset) -> None:
    gold = with_gold(questions, RUN, source="run.csv")
    # the gold itself as an answers file: FIRESPARQL's shape with message = gt_message
    lines = ["question_id,status,message,gt_message"]
    for q in gold.questions:
        assert q.execution is not None
        text = (q.execution.result or "null").replace('"', '""')
        lines.append(f'{q.id},{q.execution.status},"{text}","{text}"')
    qa = _score(gold, "\n".join(lines).encode()).get("QA")
    assert qa is not None and qa.value("em_successful") == 1.0
    assert qa.value("successful") == 5  # AQ1059's gold recorded nothing, HQ0022's an error


def test_nothing_ran_leaves_em_over_successful_undefined(questions: Dataset) -> None:
    gold = with_gold(questions, RUN, source="run.csv")
    nothing = b"question_id,status,message,gt_message\nAQ1475,ERROR,boom,null\n"
    qa = _score(gold, nothing).get("QA")
    assert qa is not None and qa.value("successful") == 0 and qa.value("em_all") == 0
    undefined = next(m for m in qa.measures if m.measure == "em_successful")
    assert undefined.value is None and undefined.undefined_reason


def test_questions_without_a_gold_execution_are_left_out(questions: Dataset) -> None:
    result = _score(questions)  # no gold at all
    qa = result.get("QA")
    assert qa is not None and qa.value("questions") == 0 and qa.value("em_all") is None
    assert any("no recorded execution of the gold" in n for n in result.notes)


def test_the_strict_profile_reads_the_run_s_values(questions: Dataset) -> None:
    gold = with_gold(questions, RUN, source="run.csv")
    qa = _score(gold, profile="strict").get("QA")
    assert qa is not None and qa.value("macro_f1") is not None


@pytest.mark.slow
def test_every_published_summary_whose_run_is_stored_is_reproduced(snapshot: Snapshot) -> None:
    from bench.sciqa import QUESTIONS, RESULTS, gold, score, summaries

    root = snapshot("sherry-pan/FIRESPARQL", RESULTS, QUESTIONS)
    dataset = gold(root)
    lines = [score(root, dataset, line) for line in summaries(root)]
    scored = [x for x in lines if x.ours is not None]
    assert len(lines) == 60 and len(scored) == 11
    assert all(x.exact for x in scored), [x for x in scored if not x.exact]
    one_shot = [x.ours for x in scored if x.setting == "oneshot" and "3.2-3b" in x.model]
    assert [(s, round(e or 0, 4), round(a, 4)) for s, e, a in one_shot if e is not None] == [
        (261, 0.7893, 0.4016), (268, 0.7836, 0.4094), (273, 0.7546, 0.4016),
    ]  # fmt: skip
