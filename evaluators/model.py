"""Typed values that cross module boundaries: benchmark datasets, questions and answers.

Parsers in ``evaluators.formats`` return these; the RDF mapping turns them into quads
(``evaluators.datasets.rdf``) and back (``evaluators.datasets.rdf_read``); the scoring code reads
them. Everything here is immutable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from pyoxigraph import Literal, NamedNode

# A gold or system answer value: an IRI, or a literal keeping its datatype or language tag.
# A value that a file marks as a URI but that is not a valid IRI (spaces, say) is kept as a
# literal typed xsd:anyURI so that nothing is lost and nothing crashes.
AnswerValue = NamedNode | Literal
# The language code (ISO 639-2 "multiple languages") of a task that asks every question in the
# language it has: a TEXT2SPARQL dataset's questions are one per language (``ck25:1-en``,
# ``db25:1-es``), and the official evaluation scores all of them together.
ALL_LANGUAGES = "mul"


def language_key(code: str) -> str:
    """Return a language code in a comparable form (``pt_BR``, ``pt-br`` -> ``pt-br``).

    >>> language_key("hi_IN")
    'hi-in'
    """
    return code.strip().replace("_", "-").lower()


def question_order(question_id: str) -> tuple[int, str]:
    """Return the sort key that puts question ids in natural order (numbers first, by value).

    >>> sorted(["10", "b", "2", "a"], key=question_order)
    ['2', '10', 'a', 'b']
    """
    return (int(question_id), "") if question_id.isdigit() else (1 << 62, question_id)


class AnswerType(StrEnum):
    """QALD answer types (the ``answertype`` field)."""

    RESOURCE = "resource"
    STRING = "string"
    NUMBER = "number"
    DATE = "date"
    BOOLEAN = "boolean"


class AnswerReading(StrEnum):
    """Which parts of a SPARQL JSON result count as the answer (each scoring profile picks one).

    A result may carry both a ``boolean`` and ``results.bindings`` (real system outputs write a
    default ``"boolean": true`` next to their bindings). ``UNION`` reads both, as GERBIL QA's
    loader does; ``BINDINGS_FIRST`` reads the bindings whenever the ``bindings`` key is present,
    even when the list is empty, and the boolean only without it, as the classic QALD script does.
    """

    UNION = "union"
    BINDINGS_FIRST = "bindings-first"


class SourceFormat(StrEnum):
    """The benchmark and answer file formats qabench reads."""

    QALD_XML = "qald-xml"
    QALD_JSON = "qald-json"
    EQALD = "eqald"
    NLQ = "nlq"
    LCQUAD = "lcquad"
    LCQUAD2 = "lcquad2"
    BIOASQ = "bioasq"
    # TEXT2SPARQL questions (YAML): evaluators.formats.text2sparql
    TEXT2SPARQL = "text2sparql"
    # answers files only (no question texts): evaluators.formats.simple_answers
    ANSWERS_JSON = "answers-json"
    ANSWERS_TSV = "answers-tsv"
    # the TEXT2SPARQL client's answers (queries) and result sets (qname -> {value: relevance})
    TEXT2SPARQL_ANSWERS = "text2sparql-answers"
    TEXT2SPARQL_RESULTS = "text2sparql-results"
    # issue 39: SciQA (questions; FIRESPARQL's executed runs as answers) and MIRAGE
    # (benchmark.json, and its stored predictions as answers)
    SCIQA = "sciqa"
    FIRESPARQL_RUN = "firesparql-run"
    MIRAGE = "mirage"
    MIRAGE_PREDICTIONS = "mirage-predictions"

    @property
    def answers_only(self) -> bool:
        """Whether the format holds answers only (never a benchmark dataset).

        >>> SourceFormat.ANSWERS_TSV.answers_only, SourceFormat.QALD_JSON.answers_only
        (True, False)
        """
        return self in (
            SourceFormat.ANSWERS_JSON,
            SourceFormat.ANSWERS_TSV,
            SourceFormat.TEXT2SPARQL_ANSWERS,
            SourceFormat.TEXT2SPARQL_RESULTS,
            SourceFormat.FIRESPARQL_RUN,
            SourceFormat.MIRAGE_PREDICTIONS,
        )

    @property
    def is_bioasq(self) -> bool:
        """Whether files of this format are BioASQ task-b data, scored by the BioASQ measures.

        The one place that decides whether a dataset is QA or BioASQ (``Dataset.is_bioasq``
        and the library's ``VersionInfo.is_bioasq`` ask here).

        >>> SourceFormat.BIOASQ.is_bioasq, SourceFormat.QALD_JSON.is_bioasq
        (True, False)
        """
        return self is SourceFormat.BIOASQ


@dataclass(frozen=True, slots=True)
class QuestionText:
    """The question in one language, with its keywords."""

    language: str
    text: str
    keywords: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class AnswerSet:
    """One SPARQL result given as an answer.

    ``values`` holds every value of every variable of every binding, in file order, without
    duplicates; ``boolean`` the result's ``boolean`` member. Both are kept apart as the file
    wrote them: ``has_bindings`` says whether the result had a ``results.bindings`` member (even
    an empty one), and a scoring profile decides what counts (``read``).
    """

    values: tuple[AnswerValue, ...] = ()
    boolean: bool | None = None
    variables: tuple[str, ...] = ()
    has_bindings: bool = False
    # the values are lexical forms only (a TEXT2SPARQL result set): IRI or literal is unknown
    lexical: bool = False

    @property
    def is_empty(self) -> bool:
        """Return whether the answer carries neither values nor a boolean."""
        return not self.values and self.boolean is None

    def read(self, reading: AnswerReading) -> tuple[tuple[AnswerValue, ...], bool | None]:
        """Return the values and the boolean that count under ``reading``.

        >>> both = AnswerSet((), True, has_bindings=True)
        >>> both.read(AnswerReading.UNION), both.read(AnswerReading.BINDINGS_FIRST)
        (((), True), ((), None))
        """
        if reading is AnswerReading.BINDINGS_FIRST and self.has_bindings:
            return self.values, None
        return self.values, self.boolean


@dataclass(frozen=True, slots=True)
class Annotation:
    """A span of a question string linked to a KB resource (extended QALD JSON).

    Offsets are character offsets into the question string; ``end`` is exclusive.
    """

    language: str
    begin: int
    end: int
    text: str
    resource: str | None = None
    kind: str | None = None


@dataclass(frozen=True, slots=True)
class Snippet:
    """A BioASQ snippet. Offsets are as the file gives them (BioASQ: inclusive end)."""

    document: str
    text: str
    begin_section: str
    end_section: str
    offset_begin: int
    offset_end: int


@dataclass(frozen=True, slots=True)
class BioasqGold:
    """The BioASQ task-b parts of a question (gold file or system response)."""

    question_type: str  # yesno | factoid | list | summary
    documents: tuple[str, ...] = ()
    snippets: tuple[Snippet, ...] = ()
    concepts: tuple[str, ...] = ()
    # yes/no answer as written ("yes", "no", or whatever a system wrote)
    yesno: str | None = None
    # factoid and list answers: entities, each a tuple of synonyms (first one is the name)
    entities: tuple[tuple[str, ...], ...] = ()
    ideal_answers: tuple[str, ...] = ()


# The TEXT2SPARQL feature that marks questions whose answers are ordered.
ORDER_MATTERS = "RESULT_ORDER_MATTERS"


@dataclass(frozen=True, slots=True)
class Text2SparqlQuestion:
    """The TEXT2SPARQL parts of a question (one language of one questions-file entry).

    ``dataset`` is the dataset IRI systems are sent (``dataset=``); the question's qname is its
    id, ``<prefix>:<entry id>-<language>``.
    """

    dataset: str
    prefix: str
    default_namespace: str | None = None
    features: tuple[str, ...] = ()
    classes: tuple[str, ...] = ()
    properties: tuple[str, ...] = ()

    @property
    def order_matters(self) -> bool:
        """Whether the answers are ordered (``RESULT_ORDER_MATTERS``).

        >>> Text2SparqlQuestion("d", "p", features=("SELECT", ORDER_MATTERS)).order_matters
        True
        """
        return ORDER_MATTERS in self.features

    def uri(self, qname: str) -> str:
        """Return the question's URI as the official client writes it (dataset IRI + local id).

        >>> Text2SparqlQuestion("https://ex.org/2025/c/", "ck25").uri("ck25:1-en")
        'https://ex.org/2025/c/1-en'
        """
        return self.dataset + qname.removeprefix(self.prefix + ":")


@dataclass(frozen=True, slots=True)
class Choices:
    """The options of a multiple-choice question (MIRAGE) and the benchmark part it is from.

    ``options`` are ``(letter, text)`` pairs in order; the gold letter is the question's answer.
    ``pmids`` are the PubMed articles the benchmark names as the question's evidence.
    """

    part: str
    options: tuple[tuple[str, str], ...]
    pmids: tuple[str, ...] = ()

    def letter_of(self, text: str) -> str | None:
        """Return the letter of the option whose text is ``text`` (case and blanks aside).

        >>> Choices("bioasq", (("A", "yes"), ("B", "no"))).letter_of(" No")
        'B'
        """
        wanted = text.strip().casefold()
        return next((k for k, v in self.options if v.strip().casefold() == wanted), None)


# FIRESPARQL's statuses of an executed query: it ran (its result is the table), it failed
# (the result is the error message), or it gave no result at all.
SUCCESS = "SUCCESS"
ERROR = "ERROR"
NULL = "NULL"


@dataclass(frozen=True, slots=True)
class Execution:
    """A SPARQL query's execution as a run recorded it: its status and its result.

    ``result`` is the result table in SPARQL 1.1 TSV (a ``?var`` header line, then one line per
    row, each cell an RDF term) when the status is ``SUCCESS``, the error message when it is
    ``ERROR``, and ``None`` when the run recorded nothing (``NULL``).
    """

    status: str
    result: str | None = None

    @property
    def succeeded(self) -> bool:
        """Whether the query ran (FIRESPARQL's ``SUCCESS``).

        >>> Execution("SUCCESS", "?x").succeeded, Execution("ERROR", "bad").succeeded
        (True, False)
        """
        return self.status == SUCCESS


@dataclass(frozen=True, slots=True)
class Question:
    """One benchmark question (or one system answer to it, for answer files)."""

    id: str
    texts: tuple[QuestionText, ...] = ()
    answer_type: AnswerType | None = None
    # the answertype exactly as written (None if absent), kept for checks and GERBIL's quirks
    answer_type_label: str | None = None
    aggregation: bool | None = None
    only_dbo: bool | None = None
    hybrid: bool | None = None
    sparql: str | None = None
    pseudo_query: str | None = None
    schemaless_query: str | None = None
    # None: the source has no answers at all (LC-QuAD, question-only files)
    answers: tuple[AnswerSet, ...] | None = None
    answer_item_types: tuple[str, ...] = ()
    annotations: tuple[Annotation, ...] = ()
    confidence: float | None = None
    out_of_scope: bool = False
    bioasq: BioasqGold | None = None
    text2sparql: Text2SparqlQuestion | None = None
    # a system's reply as received, where it is not itself in this shape (TEXT2SPARQL API,
    # a MIRAGE prediction file)
    reply: str | None = None
    # issue 39: a multiple-choice question's options (MIRAGE); a query's recorded execution
    # (SciQA gold re-run on the ORKG, FIRESPARQL's runs)
    choices: Choices | None = None
    execution: Execution | None = None

    def text(self, language: str) -> str | None:
        """Return the question string in ``language`` (``None`` if missing or blank).

        ``ALL_LANGUAGES`` (``mul``) stands for the question's own language: the text of a
        question that has exactly one.

        >>> q = Question("ck25:1-en", (QuestionText("en", "Who?"),))
        >>> q.text("mul"), q.text("de")
        ('Who?', None)
        """
        wanted = language_key(language)
        if wanted == ALL_LANGUAGES:
            own = self.languages
            return self.text(own[0]) if len(own) == 1 else None
        for entry in self.texts:
            if language_key(entry.language) == wanted and entry.text.strip():
                return entry.text
        return None

    def asked_language(self, language: str) -> str:
        """Return the language the question is asked in for a task in ``language``.

        >>> Question("1", (QuestionText("es", "¿Quién?"),)).asked_language("mul")
        'es'
        """
        if language_key(language) == ALL_LANGUAGES and len(self.languages) == 1:
            return self.languages[0]
        return language

    @property
    def languages(self) -> tuple[str, ...]:
        """Return the languages with a non-blank question string, in file order."""
        return tuple(t.language for t in self.texts if t.text.strip())

    @property
    def has_answers(self) -> bool:
        """Return whether the source gives answers for this question (possibly empty)."""
        return self.answers is not None


@dataclass(frozen=True, slots=True)
class ParseWarning:
    """Something a parser ignored or repaired (unknown fields, invalid IRIs, ...)."""

    message: str
    question_id: str | None = None


@dataclass(frozen=True, slots=True)
class Dataset:
    """A parsed benchmark or answers file."""

    format: SourceFormat
    questions: tuple[Question, ...]
    source_id: str | None = None  # the id the file gives itself (QALD "dataset.id")
    metadata: str | None = None
    warnings: tuple[ParseWarning, ...] = field(default=())

    @property
    def is_bioasq(self) -> bool:
        """Whether this is BioASQ task-b data (see ``SourceFormat.is_bioasq``)."""
        return self.format.is_bioasq

    def by_id(self) -> dict[str, Question]:
        """Return the questions keyed by id (the first one wins for duplicated ids)."""
        result: dict[str, Question] = {}
        for q in self.questions:
            result.setdefault(q.id, q)
        return result
