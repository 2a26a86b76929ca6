"""Parse a TEXT2SPARQL questions file (YAML) into a ``Dataset``: a question per entry and language.

The file names its dataset (``dataset.id``, the IRI systems are sent; ``dataset.prefix``; an
optional ``defaultNamespace``) and lists entries with ``id``, ``question`` (one text per
language), optional ``features`` (``RESULT_ORDER_MATTERS`` marks ordered answers), ``classes``
and ``properties``, and the reference ``query.sparql``. The official evaluation scores every
language of every entry as its own question, named by its *qname* ``<prefix>:<id>-<lang>``; so
does this parser: question ``ck25:1-en`` has the English text, the reference query, and the
TEXT2SPARQL parts (``Question.text2sparql``). The file has no answers: gold answers come from a
reference result set or from running the reference queries (``evaluators.text2sparql.gold``).

Refused, naming the entry (its position, id and line): a missing ``id``, ``question`` or query,
an id used twice, a question that is not a mapping of language codes to texts. Unknown fields,
blank texts and unusual language codes are warnings.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from evaluators.errors import DatasetFormatError
from evaluators.formats.parsing.diagnostics import Diagnostics, quote
from evaluators.formats.parsing.jsonfield import check_keys, child, describe, item
from evaluators.formats.text2sparql.yaml_source import load_yaml
from evaluators.model import Dataset, Question, QuestionText, SourceFormat, Text2SparqlQuestion

_DATASET_KEYS = frozenset({"id", "prefix", "defaultNamespace"})
_ENTRY_KEYS = frozenset({"id", "question", "features", "classes", "properties", "query"})
_LANGUAGE = re.compile(r"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{1,8})*$")
_PREFIX = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")
# A top-level key line that only a TEXT2SPARQL questions file starts with.
_TOP_KEY = re.compile(r"^(dataset|questions)\s*:", re.MULTILINE)


def looks_like_questions(text: str) -> bool:
    """Return whether ``text`` looks like a TEXT2SPARQL questions file (YAML, not JSON or XML).

    >>> looks_like_questions("# c\\n---\\ndataset:\\n  id: x\\nquestions: []\\n")
    True
    >>> looks_like_questions('{"questions": []}')
    False
    """
    first = text.lstrip(" \t\r\n\ufeff")[:1]
    return first not in ("{", "[", "<") and _TOP_KEY.search(text) is not None


def parse(text: str, diag: Diagnostics) -> Dataset:
    """Parse a decoded questions file.

    Args:
        text: the file's text.
        diag: the file's diagnostics.

    Returns:
        One question per entry and language, in file order (entry, then language as written);
        ``source_id`` is the file's prefix, which names the dataset by default.

    Raises:
        DatasetFormatError: the YAML is invalid, ``dataset`` lacks ``id`` or ``prefix``, or an
            entry lacks ``id``, ``question`` or ``query`` (the message names the entry).
    """
    document = load_yaml(text, diag)
    root = document.value
    if not isinstance(root, dict):
        raise diag.error(f"the YAML document is {describe(root)}; expected a mapping with "
                         "'dataset' and 'questions'")  # fmt: skip
    described = _dataset_part(root.get("dataset"), diag)
    entries = root.get("questions")
    if not isinstance(entries, list):
        raise diag.error(f"expected a list of questions, found {describe(entries)}",
                         path="$.questions")  # fmt: skip
    check_keys(root, frozenset({"dataset", "questions"}), "questions file", "$", diag)
    lines = document.question_lines
    questions: list[Question] = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(entries):
        line = lines[index] if index < len(lines) else None
        questions.extend(_entry(entry, index, line, described, seen, diag))
    return Dataset(
        SourceFormat.TEXT2SPARQL,
        tuple(questions),
        source_id=described.prefix,
        warnings=diag.warnings(),
    )


def _dataset_part(value: object, diag: Diagnostics) -> Text2SparqlQuestion:
    if not isinstance(value, dict):
        raise diag.error(f"expected the dataset's id and prefix, found {describe(value)}",
                         path="$.dataset")  # fmt: skip
    check_keys(value, _DATASET_KEYS, "dataset", "$.dataset", diag)
    iri = value.get("id")
    if not isinstance(iri, str) or not iri.strip():
        raise diag.error(
            f"the dataset IRI is missing (found {describe(iri)}); expected e.g. "
            "https://text2sparql.aksw.org/2025/corporate/",
            path="$.dataset.id",
        )
    prefix = value.get("prefix")
    if not isinstance(prefix, str) or not _PREFIX.match(prefix.strip()):
        raise diag.error(f"the dataset prefix is missing or not a name (found {describe(prefix)})"
                         "; questions are named <prefix>:<id>-<language>, e.g. ck25:1-en",
                         path="$.dataset.prefix")  # fmt: skip
    namespace = value.get("defaultNamespace")
    if namespace is not None and not isinstance(namespace, str):
        raise diag.error(f"expected a namespace IRI, found {describe(namespace)}",
                         path="$.dataset.defaultNamespace")  # fmt: skip
    return Text2SparqlQuestion(iri.strip(), prefix.strip(), namespace)


def _name(index: int, entry: object) -> str:
    """Return how messages name an entry: its position and, when readable, its id."""
    own = entry.get("id") if isinstance(entry, dict) else None
    return f"question entry {index + 1}" + (f" (id {own!r})" if own is not None else "")


def _entry(
    entry: object,
    index: int,
    line: int | None,
    described: Text2SparqlQuestion,
    seen: dict[str, int],
    diag: Diagnostics,
) -> list[Question]:
    where = item("$.questions", index)
    name = _name(index, entry)

    def fail(message: str) -> DatasetFormatError:
        return diag.error(f"{name}: {message}", path=where, line=line)

    if not isinstance(entry, dict):
        raise fail(f"expected a mapping with id, question and query, found {describe(entry)}")
    check_keys(entry, _ENTRY_KEYS, "question entry", where, diag)
    own = entry.get("id")
    if isinstance(own, bool) or not isinstance(own, int | str) or not str(own).strip():
        raise fail(f"the id is missing or unusable (found {describe(own)}); every entry needs one")
    local = str(own).strip()
    if local in seen:
        raise fail(f"id {local!r} is used twice (first by question entry {seen[local] + 1})")
    seen[local] = index
    texts = _texts(entry.get("question"), fail, local, diag)
    sparql = _query(entry.get("query"), fail)
    parts = Text2SparqlQuestion(
        described.dataset,
        described.prefix,
        described.default_namespace,
        features=_words(entry, "features", where, diag),
        classes=_words(entry, "classes", where, diag),
        properties=_words(entry, "properties", where, diag),
    )
    return [
        Question(
            id=f"{described.prefix}:{local}-{language}",
            texts=(QuestionText(language, text),),
            sparql=sparql,
            text2sparql=parts,
        )
        for language, text in texts
    ]


def _texts(
    value: object, fail: Callable[[str], DatasetFormatError], local: str, diag: Diagnostics
) -> list[tuple[str, str]]:
    if value is None:
        raise fail("the question is missing; expected one text per language, e.g. {en: ...}")
    if not isinstance(value, dict) or not value:
        raise fail(f"expected one text per language, e.g. {{en: ...}}, found {describe(value)}")
    texts: list[tuple[str, str]] = []
    for language, text in value.items():
        if not isinstance(text, str):
            raise fail(f"the {language!r} text is {describe(text)}; expected a string")
        if not _LANGUAGE.match(language):
            diag.warn(f"language code {quote(language)} is not a language tag; kept as written",
                      question_id=local, key=("t2s-language", language))  # fmt: skip
        if not text.strip():
            diag.warn(f"blank {language!r} text left out", question_id=local)
            continue
        texts.append((language, text.strip()))
    if not texts:
        raise fail("every text of the question is blank; expected at least one")
    return texts


def _query(value: object, fail: Callable[[str], DatasetFormatError]) -> str:
    sparql = value.get("sparql") if isinstance(value, dict) else None
    if not isinstance(sparql, str) or not sparql.strip():
        raise fail(f"the reference query is missing (query: {describe(value)}); expected "
                   "query: {sparql: ...}")  # fmt: skip
    return sparql


def _words(entry: dict[str, object], key: str, where: str, diag: Diagnostics) -> tuple[str, ...]:
    value = entry.get(key)
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str | int) for v in value):
        raise diag.error(f"expected a list of names, found {describe(value)}",
                         path=child(where, key))  # fmt: skip
    # a set of names (kept sorted, as the RDF of a version gives them back)
    return tuple(sorted({str(v).strip() for v in value if str(v).strip()}))
