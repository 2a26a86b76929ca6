"""MIRAGE's ``benchmark.json`` as multiple-choice questions.

The file is one JSON object with a member per dataset of the benchmark (``medqa``,
``medmcqa``, ``pubmedqa``, ``bioasq``, ``mmlu``), each an object from the dataset's own
question key to ``{"question", "options": {letter: text}, "answer": letter}`` and, for
PubMedQA* and BioASQ-Y/N, ``"PMID"``: the PubMed articles that hold the evidence (kept as a
set, in ascending order). A question
becomes ``<part>:<key>`` (``bioasq:5be44bef133db5eb78000014``, ``mmlu:anatomy-000``): the keys
of different parts are not kept apart otherwise. Its text is the question alone (MIRAGE's
question-only retrieval: the options are not part of it), its options are ``Choices`` and its
gold answer is the letter, as a plain literal. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pyoxigraph import Literal

from evaluators.formats.parsing.diagnostics import Diagnostics, quote
from evaluators.formats.parsing.jsonfield import (
    child,
    describe,
    expect_list,
    expect_object,
    expect_str,
    item,
    required,
)
from evaluators.model import (
    AnswerSet,
    Choices,
    Dataset,
    Question,
    QuestionText,
    SourceFormat,
    question_order,
)

SOURCE_ID = "mirage"
# the variable name MIRAGE's prompts ask the model to fill
ANSWER_VARIABLE = "answer_choice"


@dataclass(frozen=True, slots=True)
class Part:
    """One dataset of the benchmark: its key in the file, its name in MIRAGE's tables and the
    split its prediction files are named after (``<split>_<question key>.json``)."""

    name: str
    label: str
    split: str
    size: int


# In the order of MIRAGE's tables (README, the paper's Table 6).
PARTS: dict[str, Part] = {
    p.name: p
    for p in (
        Part("mmlu", "MMLU-Med", "test", 1089),
        Part("medqa", "MedQA-US", "test", 1273),
        Part("medmcqa", "MedMCQA", "dev", 4183),
        Part("pubmedqa", "PubMedQA*", "test", 500),
        Part("bioasq", "BioASQ-Y/N", "test", 618),
    )
}


def question_id(part: str, key: str) -> str:
    """Return the question id of a part's question key.

    >>> question_id("medqa", "0041")
    'medqa:0041'
    """
    return f"{part}:{key}"


def split_id(qid: str) -> tuple[str, str]:
    """Return the part and the question key of a question id (``("", id)`` for another id).

    >>> split_id("bioasq:5c6b198f7c78d69471000025"), split_id("7")
    (('bioasq', '5c6b198f7c78d69471000025'), ('', '7'))
    """
    part, sep, key = qid.partition(":")
    return (part, key) if sep and part in PARTS else ("", qid)


def looks_like_benchmark(doc: object) -> bool:
    """Return whether a decoded JSON document is MIRAGE's benchmark (parts mapped to objects).

    >>> looks_like_benchmark({"bioasq": {}}), looks_like_benchmark({"questions": []})
    (True, False)
    """
    return (
        isinstance(doc, dict)
        and bool(doc)
        and all(k in PARTS and isinstance(v, dict) for k, v in doc.items())
    )


def parse(doc: object, diag: Diagnostics) -> Dataset:
    """Parse the decoded ``benchmark.json`` (every part it has, in file order).

    Raises:
        DatasetFormatError: a part that MIRAGE does not have, an entry without a question
            string, options that are not texts by letter, or an answer that names no option;
            the message gives the JSON path.
    """
    top = expect_object(doc, "$", diag)
    questions: list[Question] = []
    for part, entries in top.items():
        path = child("$", part)
        if part not in PARTS:
            known = ", ".join(PARTS)
            raise diag.error(f"unknown dataset {quote(part)}; MIRAGE has {known}", path=path)
        for key, entry in expect_object(entries, path, diag).items():
            questions.append(_question(part, key, entry, child(path, key), diag))
    return Dataset(SourceFormat.MIRAGE, tuple(questions), source_id=SOURCE_ID)


def _question(part: str, key: str, entry: object, path: str, diag: Diagnostics) -> Question:
    obj = expect_object(entry, path, diag)
    text = expect_str(required(obj, "question", path, diag), child(path, "question"), diag)
    where = child(path, "options")
    given = expect_object(required(obj, "options", path, diag), where, diag)
    options = tuple(
        (letter, expect_str(value, child(where, letter), diag)) for letter, value in given.items()
    )
    answer = expect_str(required(obj, "answer", path, diag), child(path, "answer"), diag)
    if answer not in dict(options):
        letters = ", ".join(k for k, _ in options) or "none"
        raise diag.error(
            f"the answer {quote(answer)} names no option; the options are {letters}",
            path=child(path, "answer"),
        )
    pmids: list[str] = []
    if "PMID" in obj:
        where = child(path, "PMID")
        for i, pmid in enumerate(expect_list(obj["PMID"], where, diag)):
            if isinstance(pmid, bool) or not isinstance(pmid, int | str):
                found = describe(pmid)
                raise diag.error(f"expected a PubMed id, found {found}", path=item(where, i))
            pmids.append(str(pmid))
    gold = AnswerSet(values=(Literal(answer),), variables=(ANSWER_VARIABLE,), has_bindings=True)
    return Question(
        id=question_id(part, key),
        texts=(QuestionText("en", text),),
        answers=(gold,),
        choices=Choices(part, options, tuple(sorted(set(pmids), key=question_order))),
    )


def select(dataset: Dataset, parts: tuple[str, ...]) -> Dataset:
    """Return the questions of some parts of the benchmark, in file order.

    >>> d = Dataset(SourceFormat.MIRAGE, (Question("bioasq:1"), Question("mmlu:anatomy-000")))
    >>> [q.id for q in select(d, ("bioasq",)).questions]
    ['bioasq:1']
    """
    wanted = set(parts)
    kept = tuple(q for q in dataset.questions if split_id(q.id)[0] in wanted)
    return replace(dataset, questions=kept)
