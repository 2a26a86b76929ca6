"""One pure function per experiment type (QA, AIT2KB, AType, C2KB, P2KB, RE2KB), by id.

Each takes the prepared question cases of one evaluation and a ``ScoringContext`` and returns an
``ExperimentTypeResult`` (aggregate measures and per-question diagnostics), or ``None`` when
GERBIL's "empty-evaluation avoider" applies: AIT2KB, AType, P2KB and RE2KB are left out when
neither gold nor system has a single marking of their kind in the whole dataset.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from evaluators import metrics
from evaluators.errors import UnknownSubExperimentError
from evaluators.metrics import Counts
from evaluators.model import Question
from evaluators.qa import answer_matching as mt
from evaluators.qa.answer_matching import Comparison, Lookups
from evaluators.qa.gerbil_counter import gerbil_count, gerbil_gold, gerbil_system
from evaluators.qa.marking_matching import compare_iris, compare_relations, count_equal
from evaluators.qa.markings import Markings
from evaluators.qa.profiles import AnswerMatching, Profile
from evaluators.results import (
    AIT2KB,
    ATYPE,
    C2KB,
    INTERVALS,
    P2KB,
    QA,
    RE2KB,
    ExperimentTypeResult,
    MeasureValue,
    QuestionScore,
)
from evaluators.significance import (
    DEFAULT_BOOTSTRAP_SAMPLES,
    Interval,
    bootstrap_interval,
    bootstrap_of_means,
)

_GERBIL_TYPES = frozenset({"RESOURCE", "STRING", "NUMBER", "DATE", "BOOLEAN"})
NO_QUESTIONS = "no questions were evaluated"


@dataclass(frozen=True, slots=True)
class QuestionCase:
    """One gold question with what the system returned for it (``system`` None: no answer)."""

    id: str
    gold: Question
    system: Question | None
    error: str | None = None
    millis: float | None = None
    gold_markings: Markings = field(default_factory=Markings)
    system_markings: Markings = field(default_factory=Markings)

    @property
    def answered(self) -> bool:
        """Return whether the submission contains the question (the classic "processed")."""
        return self.system is not None and self.error is None


@dataclass(frozen=True, slots=True)
class ScoringContext:
    """What every experiment type needs besides the cases."""

    profile: Profile
    lookups: Lookups
    bootstrap_samples: int = DEFAULT_BOOTSTRAP_SAMPLES
    seed: int = 0


SubExperiment = Callable[[Sequence[QuestionCase], ScoringContext], ExperimentTypeResult | None]


def _value(measure: str, value: float | None, reason: str) -> MeasureValue:
    return MeasureValue(measure, value, None if value is not None else reason)


def _score(case: QuestionCase, cmp: Comparison, prf: metrics.PRF, with_run: bool) -> QuestionScore:
    c = cmp.counts
    measures = (
        MeasureValue("tp", c.tp), MeasureValue("fp", c.fp), MeasureValue("fn", c.fn),
        MeasureValue("precision", prf.precision), MeasureValue("recall", prf.recall),
        MeasureValue("f1", prf.f1),
    )  # fmt: skip
    error, millis = (case.error, case.millis) if with_run else (None, None)
    return QuestionScore(case.id, measures, cmp.gold, cmp.system, cmp.matches, error, millis)


def _counts(score: QuestionScore) -> Counts:
    return Counts(
        int(score.value("tp") or 0), int(score.value("fp") or 0), int(score.value("fn") or 0)
    )


def aggregate(scores: Sequence[QuestionScore], *, qald: bool = True) -> tuple[MeasureValue, ...]:
    """Return micro and macro P/R/F1 (and "Macro F1 QALD") of per-question scores.

    Micro values come from the summed counts, macro values are the means of the per-question
    precision, recall and F1 (so a profile's per-question rules carry over).
    """
    counts = [_counts(s) for s in scores]
    mi = metrics.micro(counts)
    ma = metrics.macro(
        [metrics.PRF(s.value("precision") or 0.0, s.value("recall") or 0.0, s.value("f1") or 0.0)
         for s in scores]
    )  # fmt: skip
    out = [
        MeasureValue("micro_precision", mi.precision),
        MeasureValue("micro_recall", mi.recall),
        MeasureValue("micro_f1", mi.f1),
        _value("macro_precision", ma.precision if ma else None, NO_QUESTIONS),
        _value("macro_recall", ma.recall if ma else None, NO_QUESTIONS),
        _value("macro_f1", ma.f1 if ma else None, NO_QUESTIONS),
    ]
    if qald:
        reason = NO_QUESTIONS if not scores else "mean QALD precision and recall are both 0"
        out.append(_value("macro_f1_qald", metrics.macro_f1_qald(counts), reason))
    return tuple(out)


def _qa_comparison(case: QuestionCase, ctx: ScoringContext) -> Comparison:
    gold = case.gold.answers
    system = case.system.answers if case.system is not None and case.error is None else None
    matching, reading = ctx.profile.answers, ctx.profile.reading
    if matching is AnswerMatching.QALD_CLASSIC:
        return mt.classic_count(gold, system, reading)
    if matching is AnswerMatching.STRICT:
        return mt.strict_count(gold, system, ctx.lookups, reading)
    era = ctx.profile.era
    return gerbil_count(
        gerbil_gold(gold, reading, era=era),
        gerbil_system(system, ctx.lookups, reading, era=era),
        ctx.lookups,
        era=era,
    )


def _classic(scores: Sequence[metrics.ClassicScore]) -> list[MeasureValue]:
    s = metrics.classic_summary(scores)
    zero = "mean precision and recall are both 0"
    unprocessed = NO_QUESTIONS if not s.processed else zero
    return [
        MeasureValue("processed", s.processed),
        _value("processed_macro_precision", s.processed_precision, NO_QUESTIONS),
        _value("processed_macro_recall", s.processed_recall, NO_QUESTIONS),
        _value("processed_f1", s.processed_f1, unprocessed),
        _value("global_macro_precision", s.global_precision, NO_QUESTIONS),
        _value("global_macro_recall", s.global_recall, NO_QUESTIONS),
        _value("global_f1", s.global_f1, NO_QUESTIONS if not scores else zero),
    ]


def qa(cases: Sequence[QuestionCase], ctx: ScoringContext) -> ExperimentTypeResult:
    """Score the answers (GERBIL's main QA task) with the profile's matching."""
    classic = ctx.profile.answers is AnswerMatching.QALD_CLASSIC
    per_question: list[QuestionScore] = []
    classic_scores: list[metrics.ClassicScore] = []
    for case in cases:
        cmp = _qa_comparison(case, ctx)
        if classic:
            c = cmp.counts
            cs = metrics.classic_score(c.tp + c.fn, c.tp + c.fp, c.tp, answered=case.answered)
            classic_scores.append(cs)
            prf = metrics.PRF(cs.precision, cs.recall, cs.f1)
        else:
            prf = metrics.prf(cmp.counts)
        per_question.append(_score(case, cmp, prf, with_run=True))
    measures = list(aggregate(per_question))
    measures.append(MeasureValue("errors", sum(1 for c in cases if c.error is not None)))
    timed = [c.millis for c in cases if c.error is None and c.millis is not None]
    avg = metrics.mean(timed)
    measures.append(_value("avg_millis", avg, "no successful, timed system call"))
    measures.extend(_intervals(per_question, classic_scores, ctx))
    measures.append(MeasureValue("questions", len(cases)))
    if classic:
        measures.extend(_classic(classic_scores))
    return ExperimentTypeResult(QA, tuple(measures), tuple(per_question))


def _bounds(measure: str, interval: Interval | None) -> list[MeasureValue]:
    low, high = INTERVALS[measure]
    return [
        _value(low, interval.low if interval else None, NO_QUESTIONS),
        _value(high, interval.high if interval else None, NO_QUESTIONS),
    ]


def _intervals(
    per_question: Sequence[QuestionScore],
    classic_scores: Sequence[metrics.ClassicScore],
    ctx: ScoringContext,
) -> list[MeasureValue]:
    """Return the 95% bootstrap intervals of the headline candidates (questions resampled):
    macro F1 (a mean), Macro F1 QALD (of the QALD precision and recall of each question's
    counts) and, under ``qald-classic``, F1 (processed) over the processed questions."""
    drawn = {"samples": ctx.bootstrap_samples, "seed": ctx.seed}
    f1 = [s.value("f1") or 0.0 for s in per_question]
    qald = [metrics.qald_prf(_counts(s)) for s in per_question]

    def f1_of(means: Sequence[float]) -> float | None:
        return metrics.harmonic_mean(means[0], means[1])

    found = _bounds("macro_f1", bootstrap_interval(f1, **drawn))
    columns = [[q.precision for q in qald], [q.recall for q in qald]]
    found += _bounds("macro_f1_qald", bootstrap_of_means(columns, f1_of, **drawn))
    done = [c for c in classic_scores if c.processed]
    if classic_scores:
        columns = [[c.precision for c in done], [c.recall for c in done]]
        found += _bounds("processed_f1", bootstrap_of_means(columns, f1_of, **drawn))
    return found


def _fmeasure(
    experiment_type: str,
    cases: Sequence[QuestionCase],
    comparisons: Sequence[Comparison],
    extra: Sequence[MeasureValue] = (),
    *,
    qald: bool,
) -> ExperimentTypeResult:
    scores = [
        _score(c, cmp, metrics.prf(cmp.counts), False)
        for c, cmp in zip(cases, comparisons, strict=True)
    ]
    return ExperimentTypeResult(
        experiment_type, (*aggregate(scores, qald=qald), *extra), tuple(scores)
    )


def gerbil_answer_type(question: Question | None) -> tuple[str, ...]:
    """Return the answer type GERBIL reads: upper-cased, "RESOUCE" fixed, unknown ones dropped."""
    if question is None:
        return ()
    label = question.answer_type_label or (
        question.answer_type.value if question.answer_type else ""
    )
    label = label.upper().replace("RESOUCE", "RESOURCE")
    return (label,) if label in _GERBIL_TYPES else ()


def _answer_types(question: Question | None, profile: Profile) -> tuple[str, ...]:
    if profile.gerbil_answer_type:
        return gerbil_answer_type(question)
    if question is None or question.answer_type is None:
        return ()
    return (question.answer_type.value,)


def answer_type(cases: Sequence[QuestionCase], ctx: ScoringContext) -> ExperimentTypeResult | None:
    """Score the answer type (resource, string, number, date, boolean) of each question."""
    gold = [_answer_types(c.gold, ctx.profile) for c in cases]
    system = [_answer_types(c.system if c.error is None else None, ctx.profile) for c in cases]
    if not any(gold) and not any(system):
        return None
    comps = [count_equal(g, s) for g, s in zip(gold, system, strict=True)]
    return _fmeasure(ATYPE, cases, comps, qald=True)


def _c2kb_style(
    experiment_type: str,
    cases: Sequence[QuestionCase],
    ctx: ScoringContext,
    select: Callable[[Markings, Question | None], tuple[str, ...]],
    *,
    avoid_empty: bool,
) -> ExperimentTypeResult | None:
    gold = [select(c.gold_markings, c.gold) for c in cases]
    system = [select(c.system_markings, c.system) for c in cases]
    if avoid_empty and not any(gold) and not any(system):
        return None
    gerbil = ctx.profile.classify_emerging
    compared = [
        compare_iris(g, s, ctx.lookups, gerbil=gerbil) for g, s in zip(gold, system, strict=True)
    ]
    extra: list[MeasureValue] = []
    if gerbil:
        for prefix, parts in (
            ("inkb", [c.in_kb for c in compared]),
            ("ee", [c.emerging for c in compared]),
        ):
            counts = [p.counts for p in parts if p is not None]
            macro = metrics.macro([metrics.prf(c) for c in counts])
            extra.append(MeasureValue(f"{prefix}_micro_f1", metrics.micro(counts).f1))
            extra.append(_value(f"{prefix}_macro_f1", macro.f1 if macro else None, NO_QUESTIONS))
    return _fmeasure(experiment_type, cases, [c.all for c in compared], extra, qald=False)


def c2kb(cases: Sequence[QuestionCase], ctx: ScoringContext) -> ExperimentTypeResult | None:
    """Score the KB resources a query mentions (GERBIL: properties and classes included)."""

    def select(m: Markings, _q: Question | None) -> tuple[str, ...]:
        if ctx.profile.classify_emerging:
            return (*m.resources, *m.properties, *m.answer_item_types)
        return m.resources

    return _c2kb_style(C2KB, cases, ctx, select, avoid_empty=False)


def p2kb(cases: Sequence[QuestionCase], ctx: ScoringContext) -> ExperimentTypeResult | None:
    """Score the properties a query uses."""
    return _c2kb_style(P2KB, cases, ctx, lambda m, _q: m.properties, avoid_empty=True)


def ait2kb(cases: Sequence[QuestionCase], ctx: ScoringContext) -> ExperimentTypeResult | None:
    """Score the answer item types: eQALD ``answeritemtype`` if given (strict), else the query's."""

    def select(m: Markings, q: Question | None) -> tuple[str, ...]:
        if not ctx.profile.classify_emerging and q is not None and q.answer_item_types:
            return q.answer_item_types
        return m.answer_item_types

    return _c2kb_style(AIT2KB, cases, ctx, select, avoid_empty=True)


def re2kb(cases: Sequence[QuestionCase], ctx: ScoringContext) -> ExperimentTypeResult | None:
    """Score the triple patterns; variables are wildcards that equal each other only."""
    gold = [c.gold_markings.relations for c in cases]
    system = [c.system_markings.relations for c in cases]
    if not any(gold) and not any(system):
        return None
    gerbil = ctx.profile.classify_emerging
    comps = [
        compare_relations(g, s, ctx.lookups, gerbil=gerbil)
        for g, s in zip(gold, system, strict=True)
    ]
    return _fmeasure(RE2KB, cases, comps, qald=True)


SUBEXPERIMENTS: dict[str, SubExperiment] = {
    QA: qa,
    AIT2KB: ait2kb,
    ATYPE: answer_type,
    C2KB: c2kb,
    P2KB: p2kb,
    RE2KB: re2kb,
}


def subexperiment(experiment_type: str) -> SubExperiment:
    """Return the scorer of ``experiment_type``.

    Raises:
        UnknownSubExperimentError: for an unknown id; the message lists the known ones.
    """
    try:
        return SUBEXPERIMENTS[experiment_type]
    except KeyError:
        known = ", ".join(SUBEXPERIMENTS)
        raise UnknownSubExperimentError(
            f"Unknown experiment type {experiment_type!r}; expected one of: {known}"
        ) from None
