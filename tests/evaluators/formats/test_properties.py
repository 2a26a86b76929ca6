"""Property tests: random and mutated documents either parse or raise ``DatasetFormatError``.

Seeds are the hand-written fixtures plus small slices of real benchmark files (cut at test
time from the shared data, never stored). Mutations drop keys, change value types, insert
garbage, truncate or corrupt bytes, and edit XML elements and attributes. Any exception other
than ``DatasetFormatError`` fails the test.
"""

from __future__ import annotations

import copy
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluators.errors import DatasetFormatError
from evaluators.formats import detect_format, parse_bytes, parse_system_response
from evaluators.model import Dataset, Question, SourceFormat

# Keys the parsers look at, so that random objects often hit real code paths.
KEYS = [
    "questions",
    "dataset",
    "id",
    "metadata",
    "question",
    "language",
    "string",
    "keywords",
    "answertype",
    "aggregation",
    "onlydbo",
    "hybrid",
    "query",
    "sparql",
    "pseudo",
    "answers",
    "head",
    "vars",
    "results",
    "bindings",
    "type",
    "value",
    "datatype",
    "xml:lang",
    "boolean",
    "body",
    "documents",
    "snippets",
    "concepts",
    "exact_answer",
    "ideal_answer",
    "document",
    "offsetInBeginSection",
    "offsetInEndSection",
    "_id",
    "corrected_question",
    "lang",
    "answer",
    "SPARQL",
    "annotations",
    "begin",
    "end",
    "confidence",
    "answeritemtype",
]
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=12)
    | st.sampled_from(["true", "uri", "http://ex.org/a", "en", "1"])
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), inner, max_size=5)
    ),
    max_leaves=25,
)
JSON_SEEDS = [
    "qald-edge.json",
    "qald5-flat.json",
    "eqald-edge.json",
    "nlq-edge.json",
    "lcquad-edge.json",
    "lcquad2-edge.json",
    "bioasq-edge.json",
    "system-reply-template.json",
]
XML_SEEDS = ["qald-edge.xml", "unclosed-answers.xml"]
PROPERTY_SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def outcome(data: bytes, fmt: SourceFormat | None = None) -> Dataset | None:
    """Parse; return the dataset or ``None`` for a DatasetFormatError (others propagate)."""
    try:
        dataset = parse_bytes(data, source="prop", format=fmt)
    except DatasetFormatError as exc:
        assert str(exc).startswith("prop")
        return None
    assert isinstance(dataset, Dataset)
    return dataset


def reply(data: bytes) -> Question | None:
    try:
        return parse_system_response(data, source="prop")
    except DatasetFormatError:
        return None


@pytest.fixture(scope="module")
def seeds(formats_data: Path, shared_data: Path) -> dict[str, bytes]:
    """Return seed documents: fixtures and three-question slices of real files."""
    result = {name: (formats_data / name).read_bytes() for name in JSON_SEEDS + XML_SEEDS}
    qald = shared_data / "qald/ag-sc_QALD"

    def sliced(rel: str, key: str | None) -> bytes:
        doc = json.loads((shared_data / rel).read_bytes())
        if key is None:
            return json.dumps(doc[:6]).encode()
        doc[key] = doc[key][:3]
        return json.dumps(doc).encode()

    result["qald9"] = sliced("qald/ag-sc_QALD/9/data/qald-9-test-multilingual.json", "questions")
    result["eqald7"] = sliced(
        "qald/ag-sc_QALD/7/data/qald-7-train-multilingual-extended-json.json", "questions"
    )
    result["bioasq2b"] = sliced(
        "bioasq/balikasg_BioASQParticipantsArea/TrainingData2014/BioASQ_2013_TaskB.zip.d/"
        "BioASQ_2013_TaskB/BioASQ-trainingDataset2b.json",
        "questions",
    )
    result["nlq"] = sliced(
        "qald/AKSW_NLIWOD/qa.datasets/src/main/resources/NLQ-OKBQA/nlq1_vis.json", None
    )
    root = ET.fromstring((qald / "7/data/qald-7-train-multilingual.xml").read_bytes())
    for extra in root.findall("question")[3:]:
        root.remove(extra)
    result["qald7xml"] = ET.tostring(root, encoding="utf-8")
    assert len(result) == 15
    return result


def _slots(value: object) -> list[tuple[object, object]]:
    """Return every (container, key-or-index) pair inside a JSON value."""
    found: list[tuple[object, object]] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.extend((item, k) for k in item)
            stack.extend(item.values())
        elif isinstance(item, list):
            found.extend((item, i) for i in range(len(item)))
            stack.extend(item)
    return found


def mutate_json(doc: object, data: st.DataObject) -> object:
    doc = copy.deepcopy(doc)
    for _ in range(data.draw(st.integers(1, 4))):
        slots = _slots(doc)
        if not slots:
            return data.draw(JSON_VALUES)
        container, key = data.draw(st.sampled_from(slots))
        operation = data.draw(st.sampled_from(["drop", "replace", "insert"]))
        if operation == "drop":
            del container[key]  # type: ignore[attr-defined]
        elif operation == "replace":
            container[key] = data.draw(JSON_VALUES)  # type: ignore[index]
        elif isinstance(container, dict):
            container[data.draw(st.sampled_from(KEYS))] = data.draw(JSON_VALUES)
        else:
            container.insert(key, data.draw(JSON_VALUES))  # type: ignore[attr-defined]
    return doc


def mutate_bytes(raw: bytes, data: st.DataObject) -> bytes:
    operation = data.draw(st.sampled_from(["truncate", "insert", "delete", "flip"]))
    at = data.draw(st.integers(0, len(raw)))
    if operation == "truncate":
        return raw[:at]
    if operation == "insert":
        garbage = data.draw(
            st.binary(max_size=8)
            | st.sampled_from(
                [b"<", b"]]>", b"&x;", b'"', b"\\u", b"<!DOCTYPE x>", b"\xff", b"{", b"</answers>"]
            )
        )
        return raw[:at] + garbage + raw[at:]
    if operation == "delete":
        return raw[:at] + raw[at + data.draw(st.integers(1, 40)) :]
    if at == len(raw):
        return raw
    return raw[:at] + bytes([raw[at] ^ data.draw(st.integers(1, 255))]) + raw[at + 1 :]


@PROPERTY_SETTINGS
@given(raw=st.binary(max_size=200))
def test_random_bytes_parse_or_fail_cleanly(raw: bytes) -> None:
    outcome(raw)
    reply(raw)


@PROPERTY_SETTINGS
@given(value=JSON_VALUES, fmt=st.sampled_from([None, *SourceFormat]))
def test_random_json_parses_or_fails_cleanly(value: object, fmt: SourceFormat | None) -> None:
    data = json.dumps(value).encode()
    outcome(data, fmt)
    reply(data)
    if fmt is None:
        try:
            detected = detect_format(data, "prop")
        except DatasetFormatError:
            return
        assert isinstance(detected, SourceFormat)


@PROPERTY_SETTINGS
@given(data=st.data())
def test_mutated_json_documents_parse_or_fail_cleanly(
    seeds: dict[str, bytes], data: st.DataObject
) -> None:
    name = data.draw(st.sampled_from(sorted(k for k in seeds if not k.endswith(("xml", "7xml")))))
    mutated = json.dumps(mutate_json(json.loads(seeds[name]), data)).encode()
    result = outcome(mutated)
    if result is not None:
        assert all(q.id.strip() for q in result.questions)
    reply(mutated)


@PROPERTY_SETTINGS
@given(data=st.data())
def test_corrupted_bytes_of_any_seed_parse_or_fail_cleanly(
    seeds: dict[str, bytes], data: st.DataObject
) -> None:
    name = data.draw(st.sampled_from(sorted(seeds)))
    outcome(mutate_bytes(seeds[name], data))


@PROPERTY_SETTINGS
@given(data=st.data())
def test_mutated_xml_elements_parse_or_fail_cleanly(
    seeds: dict[str, bytes], data: st.DataObject
) -> None:
    name = data.draw(st.sampled_from(["qald-edge.xml", "qald7xml"]))
    root = ET.fromstring(seeds[name])
    for _ in range(data.draw(st.integers(1, 3))):
        elements = list(root.iter())
        element = data.draw(st.sampled_from(elements))
        operation = data.draw(st.sampled_from(["remove", "attribute", "text", "child"]))
        parents = {child: parent for parent in root.iter() for child in parent}
        if operation == "remove" and element in parents:
            parents[element].remove(element)
        elif operation == "attribute":
            key = data.draw(st.sampled_from(["id", "answertype", "lang", "hybrid", "answerType"]))
            element.set(key, data.draw(st.text(max_size=10)))
        elif operation == "text":
            element.text = data.draw(st.text(max_size=20))
        else:
            tag = data.draw(
                st.sampled_from(
                    [
                        "question",
                        "answers",
                        "answer",
                        "uri",
                        "boolean",
                        "string",
                        "keywords",
                        "query",
                        "x",
                    ]
                )
            )
            ET.SubElement(element, tag).text = data.draw(st.text(max_size=10))
    outcome(ET.tostring(root, encoding="utf-8"))


def test_seeds_parse_before_mutation(seeds: dict[str, bytes]) -> None:
    replies = {"system-reply-template.json"}  # a reply lacks the ids a dataset needs
    parsed = {name: outcome(raw) for name, raw in seeds.items() if name not in replies}
    assert len(parsed) == 14
    assert all(d is not None and d.questions for d in parsed.values())
    assert all(reply(seeds[name]) is not None for name in replies)
