"""The BioASQ test vectors of shared/reference/bioasq.md §2.6 as model objects.

Gold A and its system response are phase A (documents and snippets); gold B and its response
are phase B (yes/no, factoid, list). The official evaluator's outputs on them are asserted in
tests/evaluators/bioasq/test_scoring.py.
"""

from __future__ import annotations

import pytest

from evaluators.model import BioasqGold, Dataset, Question, Snippet, SourceFormat

PUBMED = "http://www.ncbi.nlm.nih.gov/pubmed/"


def doc(pmid: int | str) -> str:
    """Return the PubMed URL of a PMID."""
    return f"{PUBMED}{pmid}"


def snip(pmid: int | str, begin: int, end: int, section: str = "abstract") -> Snippet:
    """Return a snippet of one section with inclusive offsets."""
    return Snippet(doc(pmid), f"text of {pmid}", section, section, begin, end)


def question(qid: str, part: BioasqGold) -> Question:
    """Return a question carrying BioASQ data."""
    return Question(id=qid, bioasq=part)


def dataset(*questions: Question) -> Dataset:
    """Return a BioASQ dataset of the given questions."""
    return Dataset(format=SourceFormat.BIOASQ, questions=questions)


def phase_a(qid: str, docs: list[int], snippets: list[Snippet]) -> Question:
    """Return a phase A question (documents and snippets only)."""
    part = BioasqGold("summary", documents=tuple(map(doc, docs)), snippets=tuple(snippets))
    return question(qid, part)


@pytest.fixture
def gold_a() -> Dataset:
    """Gold A: four questions with documents and abstract snippets."""
    return dataset(
        phase_a("q1", [1, 2, 3], [snip(1, 0, 99)]),
        phase_a(
            "q2", list(range(100, 112)), [snip(100, 0, 99), snip(101, 10, 59), snip(101, 40, 89)]
        ),
        phase_a("q3", [200], [snip(200, 0, 49)]),
        phase_a("q4", [300, 301], [snip(300, 0, 9)]),
    )


@pytest.fixture
def system_a() -> Dataset:
    """The system response to gold A."""
    return dataset(
        phase_a("q1", [1, 9991, 2, 9992, 3], [snip(1, 50, 149), snip(9991, 0, 99)]),
        phase_a("q2", [9993, 100, 101], [snip(101, 200, 299), snip(100, 0, 99)]),
        phase_a("q3", [], []),
        phase_a("q4", [9994, 9995], [snip(9994, 0, 9)]),
    )


def yesno(qid: str, answer: str) -> Question:
    """Return a yes/no question (gold or system)."""
    return question(qid, BioasqGold("yesno", yesno=answer))


def entities(qid: str, kind: str, *names: tuple[str, ...]) -> Question:
    """Return a factoid or list question whose exact answer is ``names``."""
    return question(qid, BioasqGold(kind, entities=tuple(names)))


@pytest.fixture
def gold_b() -> Dataset:
    """Gold B: five yes/no, four factoid and three list questions."""
    return dataset(
        yesno("y1", "yes"),
        yesno("y2", "no"),
        yesno("y3", "yes"),
        yesno("y4", "no"),
        yesno("y5", "yes"),
        entities("f1", "factoid", ("IL-6", "interleukin 6")),
        entities("f2", "factoid", ("BRCA1",)),
        entities("f3", "factoid", ("p53",)),
        entities("f4", "factoid", ("EGFR",)),
        entities("l1", "list", ("a", "alpha"), ("b",), ("c",)),
        entities("l2", "list", ("x",), ("y",)),
        entities("l3", "list", ("m",)),
    )


@pytest.fixture
def system_b() -> Dataset:
    """The system response to gold B."""
    wrong = [(f"wrong{i}",) for i in range(5)]
    return dataset(
        yesno("y1", "Yes."),
        yesno("y2", "no"),
        yesno("y3", "no"),
        yesno("y4", "I don't know"),
        yesno("y5", "maybe"),
        entities("f1", "factoid", ("interleukin 6",), ("tnf",)),
        entities("f2", "factoid", ("tp53",), ("brca1",)),
        entities("f3", "factoid", *wrong, ("P53",)),
        entities("f4", "factoid", ("egfr ", "EGFR")),
        entities("l1", "list", ("alpha",), ("b",), ("d",), ("b",)),
        entities("l2", "list"),
        entities("l3", "list", ("M",)),
    )
