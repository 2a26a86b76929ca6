"""Evaluation results as typed values, the experiment-type and measure registries, and the JSON
shape of the CLI.

Every scorer (QA and its sub-experiments, BioASQ) returns an ``EvaluationResult``; ``cube.py``
turns it into Data Cube quads and ``to_json`` into the ``qabench evaluate --json`` document.
A measure that has no value (GERBIL would print NaN) is ``value=None`` with a reason, never a
number.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from pyoxigraph import NamedNode

from vocab.project import QAB
from vocab.standard import GERBIL

# Experiment type ids (GERBIL's names; also the keys of ``qabench evaluate --json``), in the one
# order used everywhere: GERBIL's order of a QA experiment's sub-tasks, then the BioASQ types.
QA = "QA"
AIT2KB = "AIT2KB"
ATYPE = "AType"
C2KB = "C2KB"
P2KB = "P2KB"
RE2KB = "RE2KB"
QA_TYPES = (QA, AIT2KB, ATYPE, C2KB, P2KB, RE2KB)
BIOASQ_TYPES = ("documents", "snippets", "concepts", "yesno", "factoid", "list", "ideal")
EXPERIMENT_TYPES = QA_TYPES + BIOASQ_TYPES
# The scoring profile of the BioASQ types (the official measures); the QA profiles are in
# ``evaluators.qa.profiles``, which also lists every profile id with its term.
BIOASQ_PROFILE = "bioasq"


# GERBIL's experiment page shows its additional results (Macro F1 QALD, avg millis/doc) on a
# task's main row only and leaves them blank on the sub-experiment rows (AType, RE2KB, ...),
# although AType and RE2KB compute a Macro F1 QALD; results tables here do the same.
MAIN_ROW_ONLY = frozenset({"macro_f1_qald", "avg_millis"})


def shown_in_tables(experiment_type: str, measure: str) -> bool:
    """Return whether results tables show ``measure`` on a row of ``experiment_type``.

    The value is stored and in every document either way; this decides the tables only.

    >>> shown_in_tables("QA", "macro_f1_qald"), shown_in_tables("RE2KB", "macro_f1_qald")
    (True, False)
    >>> shown_in_tables("AType", "macro_f1")
    True
    """
    sub_experiment = experiment_type in QA_TYPES and experiment_type != QA
    return not (sub_experiment and measure in MAIN_ROW_ONLY)


def type_order(experiment_type: str) -> tuple[int, str]:
    """Return a sort key that puts experiment types in ``EXPERIMENT_TYPES`` order (others last).

    >>> sorted(["ideal", "C2KB", "QA", "custom"], key=type_order)
    ['QA', 'C2KB', 'ideal', 'custom']
    """
    if experiment_type in EXPERIMENT_TYPES:
        return EXPERIMENT_TYPES.index(experiment_type), ""
    return len(EXPERIMENT_TYPES), experiment_type


@dataclass(frozen=True, slots=True)
class MeasureInfo:
    """A measure id (stable, lowercase, used in JSON, URLs and IRIs) and its RDF property."""

    id: str
    term: NamedNode
    label: str
    is_count: bool = False


def _m(id_: str, term: NamedNode, label: str, is_count: bool = False) -> MeasureInfo:
    return MeasureInfo(id_, term, label, is_count)


MEASURES: dict[str, MeasureInfo] = {
    m.id: m
    for m in [
        # GERBIL's own measure properties (queries written for GERBIL QA keep working)
        _m("micro_precision", GERBIL.microPrecision, "Micro Precision"),
        _m("micro_recall", GERBIL.microRecall, "Micro Recall"),
        _m("micro_f1", GERBIL.microF1, "Micro F1"),
        _m("macro_precision", GERBIL.macroPrecision, "Macro Precision"),
        _m("macro_recall", GERBIL.macroRecall, "Macro Recall"),
        _m("macro_f1", GERBIL.macroF1, "Macro F1"),
        _m("macro_f1_qald", GERBIL.Macro_F1_QALD, "Macro F1 QALD"),
        _m("errors", GERBIL.errorCount, "Error Count", is_count=True),
        _m("avg_millis", GERBIL["avg_millis/doc"], "avg millis/doc"),
        _m("precision", GERBIL.precision, "Precision"),
        _m("recall", GERBIL.recall, "Recall"),
        _m("f1", GERBIL.f1, "F1"),
        _m("tp", GERBIL.truePositiveCount, "True Positives", is_count=True),
        _m("fp", GERBIL.falsePositiveCount, "False Positives", is_count=True),
        _m("fn", GERBIL.falseNegativeCount, "False Negatives", is_count=True),
        # classic QALD script
        _m("processed", QAB.processedCount, "Processed questions", is_count=True),
        _m("processed_macro_precision", QAB.processedMacroPrecision, "Macro Precision (processed)"),
        _m("processed_macro_recall", QAB.processedMacroRecall, "Macro Recall (processed)"),
        _m("processed_f1", QAB.processedF1, "F1 (processed)"),
        _m("global_macro_precision", QAB.globalMacroPrecision, "Macro Precision (all questions)"),
        _m("global_macro_recall", QAB.globalMacroRecall, "Macro Recall (all questions)"),
        _m("global_f1", QAB.globalF1, "F-1 Global"),
        # GERBIL's C2KB-style extras
        _m("inkb_micro_f1", QAB.inKbMicroF1, "InKB Micro F1"),
        _m("inkb_macro_f1", QAB.inKbMacroF1, "InKB Macro F1"),
        _m("ee_micro_f1", QAB.eeMicroF1, "EE Micro F1"),
        _m("ee_macro_f1", QAB.eeMacroF1, "EE Macro F1"),
        # confidence intervals (bootstrap 95%) of macro F1
        _m("macro_f1_ci_low", QAB.macroF1CiLow, "Macro F1, 95% CI lower bound"),
        _m("macro_f1_ci_high", QAB.macroF1CiHigh, "Macro F1, 95% CI upper bound"),
        _m("macro_f1_qald_ci_low", QAB.macroF1QaldCiLow, "Macro F1 QALD, 95% CI lower bound"),
        _m("macro_f1_qald_ci_high", QAB.macroF1QaldCiHigh, "Macro F1 QALD, 95% CI upper bound"),
        _m("processed_f1_ci_low", QAB.processedF1CiLow, "F1 (processed), 95% CI lower bound"),
        _m("processed_f1_ci_high", QAB.processedF1CiHigh, "F1 (processed), 95% CI upper bound"),
        # BioASQ task b
        _m("map", QAB.meanAveragePrecision, "MAP"),
        _m("gmap", QAB.geometricMeanAveragePrecision, "GMAP"),
        _m("mean_precision", QAB.meanPrecision, "Mean Precision"),
        _m("mean_recall", QAB.meanRecall, "Mean Recall"),
        _m("mean_f1", QAB.meanF1, "Mean F1"),
        _m("average_precision", QAB.averagePrecision, "Average Precision"),
        _m("accuracy", QAB.accuracy, "Accuracy"),
        _m("f1_yes", QAB.f1Yes, "F1 (yes)"),
        _m("f1_no", QAB.f1No, "F1 (no)"),
        _m("strict_accuracy", QAB.strictAccuracy, "Strict Accuracy"),
        _m("lenient_accuracy", QAB.lenientAccuracy, "Lenient Accuracy"),
        _m("mrr", QAB.meanReciprocalRank, "MRR"),
        _m("reciprocal_rank", QAB.reciprocalRank, "Reciprocal Rank"),
        _m("rouge2_recall", QAB.rouge2Recall, "ROUGE-2 Recall"),
        _m("rouge2_f1", QAB.rouge2F1, "ROUGE-2 F1"),
        _m("rougesu4_recall", QAB.rougeSU4Recall, "ROUGE-SU4 Recall"),
        _m("rougesu4_f1", QAB.rougeSU4F1, "ROUGE-SU4 F1"),
        _m("questions", QAB.questionsEvaluated, "Questions evaluated", is_count=True),
        # TEXT2SPARQL (trec_eval's set measures and nDCG, the challenge's headline)
        _m("set_p", QAB.setPrecision, "set_P"),
        _m("set_recall", QAB.setRecall, "set_recall"),
        _m("set_f", QAB.setF, "set_F"),
        _m("ndcg", QAB.ndcg, "nDCG"),
        _m("set_f_ndcg", QAB.setFNdcg, "set_F_ndcg"),
        # issue 39: MIRAGE's accuracy per dataset (the mean over them is ``accuracy``) and
        # FIRESPARQL's execution-based exact match
        _m("accuracy_mmlu", QAB.accuracyMmlu, "MMLU-Med"),
        _m("accuracy_medqa", QAB.accuracyMedqa, "MedQA-US"),
        _m("accuracy_medmcqa", QAB.accuracyMedmcqa, "MedMCQA"),
        _m("accuracy_pubmedqa", QAB.accuracyPubmedqa, "PubMedQA*"),
        _m("accuracy_bioasq", QAB.accuracyBioasq, "BioASQ-Y/N"),
        _m("successful", QAB.successfulCount, "Successful queries", is_count=True),
        _m("em_successful", QAB.exactMatchSuccessful, "EM (successful)"),
        _m("em_all", QAB.exactMatchAll, "EM (all)"),
        _m("em", QAB.exactMatch, "Exact match"),
    ]
}


# The measures stored with a 95% bootstrap interval, and the measures of its bounds.
INTERVALS: dict[str, tuple[str, str]] = {
    m: (f"{m}_ci_low", f"{m}_ci_high") for m in ("macro_f1", "macro_f1_qald", "processed_f1")
}
BOUNDS = frozenset(b for pair in INTERVALS.values() for b in pair)


@dataclass(frozen=True, slots=True)
class MeasureValue:
    """One measure's value, or ``None`` with the reason it is undefined."""

    measure: str
    value: float | None
    undefined_reason: str | None = None

    def __post_init__(self) -> None:
        if self.measure not in MEASURES:
            raise KeyError(f"Unknown measure id {self.measure!r}; add it to MEASURES")
        if self.value is not None and math.isnan(self.value):
            raise ValueError(f"{self.measure}: NaN is not a value; pass None and a reason")
        if self.value is None and not self.undefined_reason:
            raise ValueError(f"{self.measure}: an undefined value needs a reason")


@dataclass(frozen=True, slots=True)
class Match:
    """One matched gold/system pair and the rule that matched them."""

    gold: str
    system: str
    rule: str


@dataclass(frozen=True, slots=True)
class QuestionScore:
    """Per-question scores and diagnostics of one experiment type."""

    question_id: str
    measures: tuple[MeasureValue, ...]
    gold: tuple[str, ...] = ()
    system: tuple[str, ...] = ()
    matches: tuple[Match, ...] = ()
    error: str | None = None  # the system call failed for this question
    millis: float | None = None
    # remarks about the question's scoring (e.g. the reference's engine difference)
    notes: tuple[str, ...] = ()
    # issue 39: how the system's answer was read (its recorded execution's status, the rule
    # that chose its option)
    reading: str | None = None

    def value(self, measure: str) -> float | None:
        """Return the value of ``measure`` (``None`` if undefined or absent)."""
        for m in self.measures:
            if m.measure == measure:
                return m.value
        return None


@dataclass(frozen=True, slots=True)
class ExperimentTypeResult:
    """Aggregate and per-question results of one experiment type (QA, C2KB, documents, ...)."""

    experiment_type: str
    measures: tuple[MeasureValue, ...]
    per_question: tuple[QuestionScore, ...] = ()

    def value(self, measure: str) -> float | None:
        """Return the aggregate value of ``measure`` (``None`` if undefined or absent)."""
        for m in self.measures:
            if m.measure == measure:
                return m.value
        return None


@dataclass(frozen=True, slots=True)
class EvaluationResult:
    """Everything one evaluation of one answer set against one dataset produced."""

    dataset: str
    profile: str
    language: str
    questions: int
    results: tuple[ExperimentTypeResult, ...]
    unknown_ids: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())

    def get(self, experiment_type: str) -> ExperimentTypeResult | None:
        """Return the result of one experiment type, if it was evaluated."""
        for r in self.results:
            if r.experiment_type == experiment_type:
                return r
        return None


def measures_json(measures: tuple[MeasureValue, ...]) -> dict[str, Any]:
    """Return ``{measure: value}``; undefined values become ``null`` plus ``<id>_undefined``."""
    out: dict[str, Any] = {}
    for m in measures:
        info = MEASURES[m.measure]
        if m.value is None:
            out[m.measure] = None
            out[f"{m.measure}_undefined"] = m.undefined_reason
        else:
            out[m.measure] = int(m.value) if info.is_count else m.value
    return out


def to_json(result: EvaluationResult) -> dict[str, Any]:
    """Return the ``qabench evaluate --json`` document."""
    doc: dict[str, Any] = {
        "dataset": result.dataset,
        "profile": result.profile,
        "language": result.language,
        "questions": result.questions,
        "results": {r.experiment_type: measures_json(r.measures) for r in result.results},
    }
    if result.unknown_ids:
        doc["unknown_ids"] = list(result.unknown_ids)
    if result.notes:
        doc["notes"] = list(result.notes)
    return doc
