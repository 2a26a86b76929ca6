"""Build answer values (IRIs and literals) and answer sets from what files write.

Rules, the same for every format:

* a value given as a URI becomes a ``NamedNode`` when it is a valid absolute IRI, else a literal
  typed ``xsd:anyURI`` (with a warning), so nothing is lost and nothing crashes later;
* literals keep their language tag or datatype; plain literals are ``xsd:string``;
* untyped text (XML answers, QALD-5 JSON) is an IRI only when it is an absolute IRI and the
  answer kind is a resource; a boolean kind with ``true``/``false`` text is a boolean answer;
  everything else stays a string literal exactly as written (trimmed).

Normalisations that depend on a scoring profile (dates, numbers, labels) do not happen here.
"""

from __future__ import annotations

from pyoxigraph import Literal, NamedNode

from evaluators.formats.parsing.diagnostics import Diagnostics, quote
from evaluators.model import AnswerSet, AnswerValue
from vocab.standard import XSD

# Answer kinds (answertype values, XML element names, answerType attributes) read as IRIs.
RESOURCE_KINDS = frozenset({"resource", "resouce", "uri", "list", "iri"})
BOOLEAN_KINDS = frozenset({"boolean"})


def iri_value(value: str, diag: Diagnostics, question_id: str | None) -> AnswerValue:
    """Return ``value`` as an IRI, or as an ``xsd:anyURI`` literal when it is not a valid IRI.

    An IRI written in angle brackets (``<http://…>``, a slip in some QALD-7 files) is read
    without them, with a warning.

    Args:
        value: the text given as a URI.
        diag: receives a warning for an invalid or bracketed IRI.
        question_id: the question, for the warning.

    Returns:
        A ``NamedNode`` or a ``Literal``.
    """
    try:
        return NamedNode(value)
    except ValueError as exc:
        error = exc
    if value.startswith("<") and value.endswith(">"):
        try:
            node = NamedNode(value[1:-1])
        except ValueError:
            pass
        else:
            diag.warn(
                f"IRI answers written in angle brackets were read without them (first: "
                f"{quote(value)} in question {question_id!r})",
                key=("bracketed-iri",),
            )
            return node
    diag.warn(
        f"answers marked as URIs that are not valid IRIs were kept as xsd:anyURI literals "
        f"(first: {quote(value)} in question {question_id!r}: {error})",
        key=("bad-iri",),
    )
    return Literal(value, datatype=XSD.anyURI)


def literal_value(
    value: str,
    diag: Diagnostics,
    question_id: str | None,
    *,
    language: str | None = None,
    datatype: str | None = None,
) -> Literal:
    """Return a literal with its language tag or datatype; a bad tag or datatype is dropped.

    Args:
        value: the lexical form.
        diag: receives a warning when the tag or datatype cannot be used.
        question_id: the question, for the warning.
        language: the ``xml:lang`` tag, if any.
        datatype: the datatype IRI, if any.

    Returns:
        The literal (``xsd:string`` when neither tag nor datatype is usable).
    """
    if language:
        try:
            return Literal(value, language=language)
        except ValueError:
            diag.warn(
                f"invalid language tag {quote(language)} on answer {quote(value)}; dropped",
                question_id=question_id,
                key=("bad-lang", language),
            )
    elif datatype:
        try:
            return Literal(value, datatype=NamedNode(datatype))
        except ValueError:
            diag.warn(
                f"invalid datatype {quote(datatype)} on answer {quote(value)}; dropped",
                question_id=question_id,
                key=("bad-datatype", datatype),
            )
    return Literal(value)


def text_value(
    text: str, kind: str | None, diag: Diagnostics, question_id: str | None
) -> AnswerValue | bool:
    """Interpret untyped answer text under an answer kind (the XML rule).

    Args:
        text: the text as written (it is trimmed here).
        kind: ``uri``, ``resource``, ``boolean``, ``string``, ... or ``None``; any case.
        diag: receives a warning for a ``<uri>`` that is not an IRI.
        question_id: the question, for warnings.

    Returns:
        A ``bool`` for a boolean kind with ``true``/``false`` text, else an answer value.
    """
    text = text.strip()
    kind = kind.strip().lower() if kind else None
    if kind in BOOLEAN_KINDS and text.lower() in ("true", "false"):
        return text.lower() == "true"
    if kind == "uri":
        return iri_value(text, diag, question_id)
    if kind in RESOURCE_KINDS:
        try:
            return NamedNode(text)
        except ValueError:
            return Literal(text)
    return Literal(text)


class AnswerSetBuilder:
    """Accumulate the values of one answer set, without duplicates, in file order."""

    __slots__ = ("_booleans", "_diag", "_question_id", "_seen", "_values", "_variables")

    def __init__(self, diag: Diagnostics, question_id: str | None) -> None:
        self._diag = diag
        self._question_id = question_id
        self._values: list[AnswerValue] = []
        self._seen: set[AnswerValue] = set()
        self._variables: list[str] = []
        self._booleans: list[bool] = []

    def add(self, value: AnswerValue | bool) -> None:
        """Add a value (or a boolean, for ASK answers)."""
        if isinstance(value, bool):
            self._booleans.append(value)
        elif value not in self._seen:
            self._seen.add(value)
            self._values.append(value)

    def add_variable(self, name: str) -> None:
        """Record a result variable name (once)."""
        if name not in self._variables:
            self._variables.append(name)

    def build(self) -> AnswerSet:
        """Return the answer set; booleans mixed with values are kept as string literals."""
        boolean: bool | None = None
        if self._booleans and self._values:
            self._diag.warn(
                "an answer set mixes true/false with other values; kept them all as strings",
                question_id=self._question_id,
                key=("mixed-boolean", self._question_id),
            )
            for b in self._booleans:
                self.add(Literal(str(b).lower()))
        elif self._booleans:
            boolean = self._booleans[0]
            if len(set(self._booleans)) > 1:
                self._diag.warn(
                    "an answer set holds both true and false; kept the first",
                    question_id=self._question_id,
                    key=("conflicting-boolean", self._question_id),
                )
        return AnswerSet(tuple(self._values), boolean, tuple(self._variables))
