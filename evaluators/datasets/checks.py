"""Dataset checks (``qabench datasets check``): pure functions from a ``Dataset`` to findings.

Each finding has a stable code, a severity (``error``: evaluation results will be misleading;
``warning``: worth a look; ``info``), the question it concerns and a message. SPARQL syntax is
checked by a function passed in, so this module stays free of parsers and stores.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pyoxigraph import Literal, NamedNode, Quad

from evaluators.model import AnswerType, Dataset, Question, SourceFormat, language_key
from vocab.iris import sub_iri
from vocab.project import QAB
from vocab.standard import PROV, RDF, XSD


@dataclass(frozen=True, slots=True)
class SyntaxProblem:
    """What a SPARQL parser reported."""

    message: str
    line: int | None = None
    column: int | None = None
    # sparql-syntax: the parser cannot read it; sparql-unsupported: it parses, but calls
    # something the engine does not know (an unknown function, say)
    code: str = "sparql-syntax"


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem found in a dataset."""

    code: str
    severity: str  # error | warning | info
    message: str
    question_id: str | None = None
    line: int | None = None
    column: int | None = None


@dataclass(frozen=True, slots=True)
class CheckReport:
    """All findings for one dataset."""

    questions: int
    findings: tuple[Finding, ...]

    def count(self, severity: str) -> int:
        """Return how many findings have ``severity``."""
        return sum(1 for f in self.findings if f.severity == severity)

    def by_code(self) -> dict[str, int]:
        """Return the number of findings per code, most frequent first."""
        return dict(Counter(f.code for f in self.findings).most_common())


SparqlChecker = Callable[[str], SyntaxProblem | None]

CHECK_CODES = {
    "duplicate-id": "two questions share an id; answers are matched by id",
    "no-text": "the question has no text in any language",
    "missing-text": "a language used by the dataset has no text for this question",
    "no-gold-answers": "the file gives no gold answers for this question",
    "empty-gold-answer": "the gold answer is empty",
    "missing-sparql": "no gold SPARQL query",
    "sparql-syntax": "the gold SPARQL query does not parse",
    "unknown-answer-type": "the answertype is not resource, string, number, date or boolean",
    "missing-answer-type": "no answertype",
    "answer-type-mismatch": "the answers do not fit the declared answer type",
    "out-of-scope": "marked OUT OF SCOPE",
    "reference-differs": "the reference query gives another result on the knowledge base than "
    "the gold answers (TEXT2SPARQL: an engine difference)",
}

_NUMERIC = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_DATE = re.compile(r"^-?\d{1,4}-\d{1,2}-\d{1,2}([T ].*)?$|^\d{4}$")
_NUMERIC_TYPES = {
    XSD.integer,
    XSD.decimal,
    XSD.double,
    XSD.float,
    XSD.int,
    XSD.long,
    XSD.nonNegativeInteger,
}
_DATE_TYPES = {XSD.date, XSD.dateTime, XSD.gYear, XSD.gYearMonth}


def check_dataset(
    dataset: Dataset,
    sparql_problem: SparqlChecker | None = None,
    reference_differences: Mapping[str, str] | None = None,
) -> CheckReport:
    """Run every check on ``dataset``.

    Args:
        dataset: the parsed dataset.
        sparql_problem: returns the parser's complaint about a query, or ``None`` if it parses.
        reference_differences: question id -> how its reference query's results on a
            knowledge base differ from its gold answers (``evaluators.knowledge.reference``).

    Returns:
        The report, findings in question order.
    """
    findings: list[Finding] = []
    counts = Counter(q.id for q in dataset.questions)
    languages = sorted({language_key(lang) for q in dataset.questions for lang in q.languages})
    if dataset.format is SourceFormat.TEXT2SPARQL:
        languages = []  # one question per language by design (its qname names the language)
    differences = reference_differences or {}
    for q in dataset.questions:
        if counts[q.id] > 1:
            findings.append(
                Finding("duplicate-id", "error", f"id {q.id!r} occurs {counts[q.id]} times", q.id)
            )
            counts[q.id] = 1  # report each duplicated id once
        findings.extend(_text_findings(q, languages))
        if q.out_of_scope:
            findings.append(Finding("out-of-scope", "info", "marked OUT OF SCOPE", q.id))
        if dataset.is_bioasq:
            continue
        findings.extend(_answer_findings(q))
        findings.extend(_query_findings(q, sparql_problem))
        if q.id in differences:
            findings.append(Finding("reference-differs", "warning", differences[q.id], q.id))
    return CheckReport(len(dataset.questions), tuple(findings))


def _text_findings(q: Question, languages: list[str]) -> list[Finding]:
    if not q.languages:
        return [Finding("no-text", "error", "no question text in any language", q.id)]
    have = {language_key(lang) for lang in q.languages}
    missing = [lang for lang in languages if lang not in have]
    if missing:
        return [
            Finding("missing-text", "warning", f"no question text in: {', '.join(missing)}", q.id)
        ]
    return []


def _answer_findings(q: Question) -> list[Finding]:
    out: list[Finding] = []
    if q.answers is None:
        return [Finding("no-gold-answers", "warning", "the file gives no gold answers", q.id)]
    if all(a.is_empty for a in q.answers) and not q.out_of_scope:
        out.append(Finding("empty-gold-answer", "warning", "the gold answer is empty", q.id))
    label = (q.answer_type_label or "").strip()
    if label and label.lower() not in {t.value for t in AnswerType}:
        read_as = f"read as {q.answer_type.value}" if q.answer_type else "ignored"
        out.append(
            Finding(
                "unknown-answer-type",
                "warning",
                f"answertype {label!r} is not one of resource, string, number, date, boolean "
                f"({read_as}; GERBIL ignores it)",
                q.id,
            )
        )
    if q.answer_type is None:
        if not label:
            out.append(Finding("missing-answer-type", "info", "no answertype", q.id))
        return out
    mismatch = _type_mismatch(q)
    if mismatch:
        out.append(Finding("answer-type-mismatch", "warning", mismatch, q.id))
    return out


def _type_mismatch(q: Question) -> str | None:
    answers = q.answers or ()
    has_boolean = any(a.boolean is not None for a in answers)
    values = [v for a in answers for v in a.values]
    declared = q.answer_type
    if declared is AnswerType.BOOLEAN:
        return None if has_boolean or not values else "declared boolean, but answers are values"
    if has_boolean:
        return f"declared {declared}, but the answer is a boolean"
    bad: list[NamedNode | Literal]
    if declared is AnswerType.RESOURCE:
        bad = [v for v in values if not isinstance(v, NamedNode)]
    elif declared is AnswerType.NUMBER:
        bad = [v for v in values if not _is_number(v)]
    elif declared is AnswerType.DATE:
        bad = [v for v in values if not _is_date(v)]
    else:
        bad = [v for v in values if isinstance(v, NamedNode)]
    if not bad:
        return None
    shown = ", ".join(str(v)[:60] for v in bad[:3])
    return f"declared {declared}, but {len(bad)} of {len(values)} answers do not fit: {shown}"


def _is_number(v: NamedNode | Literal) -> bool:
    if isinstance(v, NamedNode):
        return False
    return v.datatype in _NUMERIC_TYPES or bool(_NUMERIC.match(v.value.strip()))


def _is_date(v: NamedNode | Literal) -> bool:
    if isinstance(v, NamedNode):
        return False
    return v.datatype in _DATE_TYPES or bool(_DATE.match(v.value.strip()))


def _query_findings(q: Question, sparql_problem: SparqlChecker | None) -> list[Finding]:
    if not q.sparql:
        if q.pseudo_query or q.out_of_scope:
            return []
        return [Finding("missing-sparql", "warning", "no gold SPARQL query", q.id)]
    if sparql_problem is None or "OUT OF SCOPE" in q.sparql:
        return []
    problem = sparql_problem(q.sparql)
    if problem is None:
        return []
    return [Finding(problem.code, "error", problem.message, q.id, problem.line, problem.column)]


def report_quads(
    report: CheckReport, *, version: NamedNode, graph: NamedNode, checked_at: str
) -> list[Quad]:
    """Return the RDF of a check report (one ``qab:CheckReport`` with its findings).

    Args:
        report: the findings.
        version: the dataset version IRI checked.
        graph: the check graph of that version (``store.graphs.check_graph``).
        checked_at: ISO 8601 time of the check.
    """
    node = sub_iri(version, "check")
    out = [
        Quad(version, QAB.checkReport, node, graph),
        Quad(node, RDF.type, QAB.CheckReport, graph),
        Quad(node, PROV.wasDerivedFrom, version, graph),
        Quad(node, PROV.generatedAtTime, Literal(checked_at, datatype=XSD.dateTime), graph),
        Quad(node, QAB.count, Literal(str(len(report.findings)), datatype=XSD.integer), graph),
    ]
    for i, f in enumerate(report.findings):
        fnode = sub_iri(node, "finding", str(i))
        out += [
            Quad(node, QAB.finding, fnode, graph),
            Quad(fnode, RDF.type, QAB.CheckFinding, graph),
            Quad(fnode, QAB.code, Literal(f.code), graph),
            Quad(fnode, QAB.severity, Literal(f.severity), graph),
            Quad(fnode, QAB.message, Literal(f.message), graph),
            Quad(fnode, QAB.position, Literal(str(i), datatype=XSD.integer), graph),
        ]
        if f.question_id is not None:
            out.append(Quad(fnode, QAB.questionId, Literal(f.question_id), graph))
        if f.line is not None:
            out.append(Quad(fnode, QAB.line, Literal(str(f.line), datatype=XSD.integer), graph))
        if f.column is not None:
            out.append(Quad(fnode, QAB.column, Literal(str(f.column), datatype=XSD.integer), graph))
    return out
