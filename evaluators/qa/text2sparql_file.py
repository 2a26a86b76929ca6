"""The TEXT2SPARQL evaluation file: which rules a profile follows, and the file's averages.

The official client writes one JSON object per evaluation: one member per qname (``set_P``,
``set_recall``, ``set_F``, and ``ndcg`` on ordered questions) and the averages. This module
holds the rules of each TEXT2SPARQL profile (``Rules``), a question's headline value and the
averages of each edition (``aggregate``; ``../shared/reference/text2sparql.md``):

* ``average`` (both editions): numpy means of the set measures over every qname, ``ndcg`` over
  the ordered ones, ``set_F_ndcg`` the exact mean of each qname's headline value together with
  the mean ``ndcg`` once more (n + 1 values: the client averages its result dictionary after
  the ``average`` object was added to it);
* 2025 (``text2sparql``), when there are several languages: ``set_F-<lang>``, ... keys inside
  ``average``, exact means over the language, ``set_F_ndcg-<lang>`` over its n values;
* 2026 (``text2sparql-2026``): an ``average-<lang>`` object per language with exact means of the
  set measures, ``ndcg`` over the language's ordered qnames and ``set_F_ndcg`` over its n
  values and its mean ``ndcg`` once (n + 1 values). The published files follow this rule; the
  client's code of the same release combines over every entry of its results, averages
  included, and does not reproduce them (docs/scoring.md, "TEXT2SPARQL'26").

Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evaluators.model import language_key
from evaluators.qa.trec import exact_mean, numpy_mean
from evaluators.results import QuestionScore

OFFICIAL = "text2sparql"
CORRECTED = "text2sparql-corrected"
OFFICIAL_2026 = "text2sparql-2026"
# measure ids (ours) and the official file's keys
KEYS = {"set_p": "set_P", "set_recall": "set_recall", "set_f": "set_F", "ndcg": "ndcg"}


@dataclass(frozen=True, slots=True)
class Rules:
    """Which of the official evaluation's rules are corrected (all false: the official one)."""

    booleans_by_value: bool = False
    rdf_terms: bool = False
    row_order: bool = False
    empty_reference_right: bool = False
    mean_over_asked: bool = False
    # 2026: per-language "average-<lang>" objects (their set_F_ndcg counts the mean ndcg once)
    language_objects: bool = False


RULES = {
    OFFICIAL: Rules(),
    OFFICIAL_2026: Rules(language_objects=True),
    CORRECTED: Rules(True, True, True, True, True),
}


def headline_value(values: Mapping[str, float]) -> float:
    """Return a question's headline value: ``ndcg`` where answers are ordered, else ``set_F``."""
    return values["ndcg"] if "ndcg" in values else values["set_f"]


@dataclass(frozen=True, slots=True)
class Row:
    """One question's values as the evaluation file lists them."""

    qname: str
    language: str
    values: Mapping[str, float]


def aggregate(rows: Sequence[Row], rules: Rules = Rules()) -> dict[str, Any]:
    """Return the averages of the evaluation file (official keys): the ``average`` object's
    members, then the per-language forms when the questions are in more than one language
    (2025: ``set_F-<lang>`` keys beside them; 2026: ``average-<lang>`` objects)."""
    if not rows:
        return {}
    mean = exact_mean if rules.mean_over_asked else numpy_mean
    out: dict[str, Any] = {
        KEYS[m]: mean([r.values[m] for r in rows]) for m in ("set_p", "set_recall", "set_f")
    }
    ordered = [r.values["ndcg"] for r in rows if "ndcg" in r.values]
    heads = [headline_value(r.values) for r in rows]
    if ordered:
        out["ndcg"] = mean(ordered)
        # the client averages over its result dictionary after adding "average" to it
        out["set_F_ndcg"] = exact_mean(heads if rules.mean_over_asked else [*heads, out["ndcg"]])
    languages = list(dict.fromkeys(language_key(r.language) for r in rows))
    if len(languages) > 1:
        for language in languages:
            part = [r for r in rows if language_key(r.language) == language]
            if rules.language_objects:
                out[f"average-{language}"] = language_object(part)
            else:
                out.update(_language_averages(part, language, bool(ordered)))
    return out


def _language_averages(rows: Sequence[Row], language: str, ordered: bool) -> dict[str, float]:
    # 2025: keys "<measure>-<lang>" inside "average"; set_F_ndcg-<lang> over n values only
    out = {f"{KEYS[m]}-{language}": exact_mean([r.values[m] for r in rows])
           for m in ("set_p", "set_recall", "set_f")}  # fmt: skip
    part = [r.values["ndcg"] for r in rows if "ndcg" in r.values]
    if ordered:
        if part:
            out[f"ndcg-{language}"] = exact_mean(part)
        out[f"set_F_ndcg-{language}"] = exact_mean([headline_value(r.values) for r in rows])
    return out


def language_object(rows: Sequence[Row]) -> dict[str, float]:
    """Return one language's ``average-<lang>`` object of a 2026 evaluation file.

    Exact means (``statistics.fmean``) over the language's questions; ``ndcg`` over its ordered
    ones; ``set_F_ndcg`` over its headline values and its mean ``ndcg`` once more (n + 1
    values). Without ordered questions there is neither ``ndcg`` nor ``set_F_ndcg``.

    >>> rows = [Row("x:1-en", "en", {"set_p": 1.0, "set_recall": 1.0, "set_f": 1.0}),
    ...         Row("x:2-en", "en", {"set_p": 0.0, "set_recall": 0.0, "set_f": 0.0, "ndcg": 0.5})]
    >>> language_object(rows)["set_F_ndcg"], language_object(rows)["ndcg"]
    (0.6666666666666666, 0.5)
    """
    out = {
        KEYS[m]: exact_mean([r.values[m] for r in rows]) for m in ("set_recall", "set_f", "set_p")
    }
    ordered = [r.values["ndcg"] for r in rows if "ndcg" in r.values]
    if ordered:
        out["ndcg"] = exact_mean(ordered)
        out["set_F_ndcg"] = exact_mean([*(headline_value(r.values) for r in rows), out["ndcg"]])
    return out


def evaluation_document(rows: Sequence[Row], rules: Rules = Rules()) -> dict[str, Any]:
    """Return the evaluation in the official file's shape: one object per qname, then
    ``average`` (and, 2026, the ``average-<lang>`` objects after it)."""
    doc: dict[str, Any] = {
        r.qname: {KEYS[m]: v for m, v in r.values.items() if m in KEYS} for r in rows
    }
    averages = aggregate(rows, rules)
    doc["average"] = {k: v for k, v in averages.items() if not k.startswith("average-")}
    doc.update({k: v for k, v in averages.items() if k.startswith("average-")})
    return doc


def rows(per_question: Sequence[QuestionScore], languages: Mapping[str, str]) -> list[Row]:
    """Return the per-question values as evaluation-file rows (``languages``: id -> language).

    A question's language comes from ``languages``, else from its qname's ``-<lang>`` end.
    """
    out = []
    for score in per_question:
        values = {m.measure: m.value for m in score.measures if m.measure in KEYS}
        if any(v is None for v in values.values()):
            continue
        language = languages.get(score.question_id) or score.question_id.rsplit("-", 1)[-1]
        out.append(
            Row(score.question_id, language, {k: float(v or 0.0) for k, v in values.items()})
        )
    return out


@dataclass(frozen=True, slots=True)
class OfficialNames:
    """The names the official client gives the files of one evaluation."""

    evaluation: str
    system_result_set: str
    true_result_set: str


def official_names(profile: str, prefix: str) -> OfficialNames:
    """Return the official file names of an evaluation under ``profile`` (2025 or 2026 ones).

    >>> official_names("text2sparql-2026", "ck26").evaluation
    'ck26_results.json'
    >>> official_names("text2sparql", "ck25").system_result_set
    'ck25_system_result_set.json'
    """
    truth = f"{prefix}_true_result_set.json"
    if RULES.get(profile, Rules()).language_objects:
        return OfficialNames(f"{prefix}_results.json", f"{prefix}_pred_result_set.json", truth)
    return OfficialNames(f"{prefix}_eval.json", f"{prefix}_system_result_set.json", truth)


def true_result_set(
    items: Mapping[str, Mapping[str, int]], ordered: Sequence[str]
) -> dict[str, Any]:
    """Return a reference result set as the 2026 client writes it: ``order_required`` last,
    and only when some question is ordered.

    >>> true_result_set({"x:1-en": {"a": 1}}, ["x:1-en"])
    {'x:1-en': {'a': 1}, 'order_required': ['x:1-en']}
    """
    doc: dict[str, Any] = {qname: dict(values) for qname, values in items.items()}
    if ordered:
        doc["order_required"] = list(ordered)
    return doc
