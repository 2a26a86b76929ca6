"""Read the ``answers`` of QALD JSON and eQALD: SPARQL 1.1 JSON results, as files write them.

Handles ``head.vars``, ``results.bindings`` (types ``uri``, ``literal``, ``typed-literal``,
``bnode`` and the non-standard ``resource`` that GERBIL's template server sends), ``datatype``,
``xml:lang``, boolean results, empty ``{}`` bindings (skipped), answers given as one object or as
a JSON string holding it, and QALD-5's flat ``[{"string": value}]`` lists. A result's
``boolean`` and its bindings are kept apart, with whether the ``bindings`` member was present:
each scoring profile decides which of them counts.
"""

from __future__ import annotations

from pyoxigraph import Literal

from evaluators.formats.parsing.diagnostics import Diagnostics, quote
from evaluators.formats.parsing.jsonfield import (
    check_keys,
    child,
    describe,
    expect_list,
    expect_object,
    expect_str,
    item,
    opt_str,
)
from evaluators.formats.parsing.source import load_embedded_json
from evaluators.formats.parsing.values import AnswerSetBuilder, iri_value, literal_value, text_value
from evaluators.model import AnswerSet, AnswerValue

_RESULT_KEYS = frozenset({"head", "results", "boolean"})
_HEAD_KEYS = frozenset({"vars", "link"})
_RESULTS_KEYS = frozenset({"bindings", "distinct", "ordered"})
_TERM_KEYS = frozenset({"type", "value", "datatype", "xml:lang"})
# QALD-5 JSON writes each answer as a one-key object named after the value's kind.
_FLAT_KINDS = frozenset({"string", "uri", "number", "date"})
_IRI_TYPES = frozenset({"uri", "iri", "resource"})
_LITERAL_TYPES = frozenset({"literal", "typed-literal"})


def answer_sets(
    value: object, path: str, diag: Diagnostics, question_id: str, kind: str | None
) -> tuple[AnswerSet, ...]:
    """Read an ``answers`` field: a list of results, one result object, or a JSON string.

    Args:
        value: the field's value.
        path: its JSON path.
        diag: the file's diagnostics.
        question_id: the question, for warnings.
        kind: the question's answer type value, used for untyped (flat) answers.

    Returns:
        One ``AnswerSet`` per SPARQL result; flat answers form a single set.

    Raises:
        DatasetFormatError: the field or a result in it has the wrong shape.
    """
    if isinstance(value, str):
        value = load_embedded_json(value, path, diag) if value.strip() else []
    if isinstance(value, dict):
        return (result_set(value, path, diag, question_id),)
    entries = expect_list(value, path, diag)
    sets: list[AnswerSet] = []
    flat = AnswerSetBuilder(diag, question_id)
    has_flat = False
    for i, entry in enumerate(entries):
        where = item(path, i)
        obj = expect_object(entry, where, diag)
        if len(obj) == 1 and next(iter(obj)) in _FLAT_KINDS:
            has_flat = True
            flat_kind, text = next(iter(obj.items()))
            text = expect_str(text, child(where, flat_kind), diag)
            flat.add(
                text_value(text, flat_kind if flat_kind != "string" else kind, diag, question_id)
            )
        else:
            sets.append(result_set(obj, where, diag, question_id))
    if has_flat:
        sets.append(flat.build())
    return tuple(sets)


def result_set(value: object, path: str, diag: Diagnostics, question_id: str) -> AnswerSet:
    """Read one SPARQL JSON result (bindings or boolean) into an ``AnswerSet``.

    Raises:
        DatasetFormatError: the result has the wrong shape.
    """
    obj = expect_object(value, path, diag)
    check_keys(obj, _RESULT_KEYS, "answer", path, diag)
    builder = AnswerSetBuilder(diag, question_id)
    head = obj.get("head")
    if head is not None:
        head_path = child(path, "head")
        head_obj = expect_object(head, head_path, diag)
        check_keys(head_obj, _HEAD_KEYS, "answer head", head_path, diag)
        for i, var in enumerate(
            expect_list(head_obj.get("vars", []), child(head_path, "vars"), diag)
        ):
            builder.add_variable(expect_str(var, item(child(head_path, "vars"), i), diag))
    # The boolean and the bindings stay apart: which of them counts is the scoring profile's
    # decision (``AnswerSet.read``), not the parser's.
    boolean = None
    if "boolean" in obj:
        boolean = _boolean(obj["boolean"], child(path, "boolean"), diag, question_id)
    results = obj.get("results")
    has_bindings = False
    if results is not None:
        has_bindings = _read_bindings(results, child(path, "results"), builder, diag, question_id)
    built = builder.build()
    return AnswerSet(built.values, boolean, built.variables, has_bindings)


def _boolean(value: object, path: str, diag: Diagnostics, question_id: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        diag.warn(
            f"boolean answer written as the string {quote(value)}; read as a boolean",
            question_id=question_id,
            key=("string-boolean",),
        )
        return value.strip().lower() == "true"
    raise diag.error(f"expected true or false, found {describe(value)}", path=path)


def _read_bindings(
    value: object, path: str, builder: AnswerSetBuilder, diag: Diagnostics, question_id: str
) -> bool:
    """Add the bindings' values to ``builder``; return whether a ``bindings`` member exists."""
    results = expect_object(value, path, diag)
    check_keys(results, _RESULTS_KEYS, "answer results", path, diag)
    bindings_path = child(path, "bindings")
    for i, binding in enumerate(expect_list(results.get("bindings", []), bindings_path, diag)):
        if not isinstance(binding, dict):
            raise diag.error(
                f"expected an object, found {describe(binding)}", path=item(bindings_path, i)
            )
        for var, term in binding.items():
            builder.add_variable(var)
            # Fast path for the common two-key terms; paths are built only when needed.
            if isinstance(term, dict) and len(term) == 2:
                lexical, kind = term.get("value"), term.get("type")
                if isinstance(lexical, str):
                    if kind == "uri":
                        builder.add(iri_value(lexical, diag, question_id))
                        continue
                    if kind == "literal":
                        builder.add(Literal(lexical))
                        continue
            found = _term(term, child(item(bindings_path, i), var), diag, question_id)
            if found is not None:
                builder.add(found)
    return "bindings" in results


def _term(value: object, path: str, diag: Diagnostics, question_id: str) -> AnswerValue | None:
    term = expect_object(value, path, diag)
    check_keys(term, _TERM_KEYS, "binding", path, diag)
    lexical = term.get("value")
    if lexical is None:
        diag.warn(
            f"skipped bindings without a value (first at {path})",
            question_id=question_id,
            key=("no-value",),
        )
        return None
    if isinstance(lexical, int | float) and not isinstance(lexical, bool):
        diag.warn(
            f"binding value written as a JSON number at {path}; read as its text",
            question_id=question_id,
            key=("number-value",),
        )
        lexical = str(lexical)
    lexical = expect_str(lexical, child(path, "value"), diag)
    kind = opt_str(term, "type", path, diag)
    datatype = opt_str(term, "datatype", path, diag)
    language = opt_str(term, "xml:lang", path, diag)
    if kind in _IRI_TYPES:
        return iri_value(lexical, diag, question_id)
    if kind in _LITERAL_TYPES or (kind is None and (datatype or language)):
        return literal_value(lexical, diag, question_id, language=language, datatype=datatype)
    if kind == "bnode":
        diag.warn(
            "blank-node answers cannot be compared across results; kept their labels as strings",
            question_id=question_id,
            key=("bnode",),
        )
        return literal_value("_:" + lexical, diag, question_id)
    diag.warn(
        f"unknown binding type {quote(str(kind))} (first at {path}); read the value as text",
        question_id=question_id,
        key=("binding-type", kind),
    )
    found = text_value(lexical, "resource", diag, question_id)
    return literal_value(lexical, diag, question_id) if isinstance(found, bool) else found
