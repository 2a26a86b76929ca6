"""One pure function per experiment type (QA, AIT2KB, AType, C2KB, P2KB, RE2KB), by id.

Each takes the prepared question cases of one evaluation and a ``ScoringContext`` and returns an
``ExperimentTypeResult`` (aggregate measures and per-question diagnostics), or ``None`` when
GERBIL's "empty-evaluation avoider" applies: AIT2KB, AType, P2KB and RE2KB are left out when
neither gold nor system has a single marking of their kind in the whole dataset.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pyoxigraph import NamedNode

from evaluators import matching as mt
from evaluators import metrics
from evaluators.errors import UnknownSubExperimentError
from evaluators.markings import Markings, Relation, Term
from evaluators.matching import Comparison, Lookups, Meaning, Rule
from evaluators.metrics import Counts
from evaluators.model import Question
from evaluators.normalisation import uri_key, value_key
from evaluators.profiles import AIT2KB, ATYPE, C2KB, P2KB, QA, RE2KB, AnswerMatching, Profile
from evaluators.results import ExperimentTypeResult, Match, MeasureValue, QuestionScore
from evaluators.significance import bootstrap_interval

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
    bootstrap_samples: int = 1000
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
    matching = ctx.profile.answers
    if matching is AnswerMatching.QALD_CLASSIC:
        return mt.classic_count(gold, system)
    if matching is AnswerMatching.STRICT:
        return mt.strict_count(gold, system, ctx.lookups)
    return mt.gerbil_count(
        mt.gerbil_gold(gold),
        mt.gerbil_system(system, ctx.lookups),
        ctx.lookups,
        legacy=matching is AnswerMatching.GERBIL_LEGACY,
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
    interval = bootstrap_interval(
        [s.value("f1") or 0.0 for s in per_question], samples=ctx.bootstrap_samples, seed=ctx.seed
    )
    measures.append(_value("macro_f1_ci_low", interval.low if interval else None, NO_QUESTIONS))
    measures.append(_value("macro_f1_ci_high", interval.high if interval else None, NO_QUESTIONS))
    measures.append(MeasureValue("questions", len(cases)))
    if classic:
        measures.extend(_classic(classic_scores))
    return ExperimentTypeResult(QA, tuple(measures), tuple(per_question))


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


def count_equal(gold: Sequence[str], system: Sequence[str]) -> Comparison:
    """Count one question where elements match when equal (GERBIL's greedy one-to-one)."""
    pairs = mt.greedy(gold, system, key=lambda s: s)
    counts = Counts(len(pairs), len(system) - len(pairs), len(gold) - len(pairs))
    matches = tuple(Match(gold[i], system[j], Rule.EXACT) for i, j in pairs)
    return Comparison(counts, tuple(gold), tuple(system), matches)


def answer_type(cases: Sequence[QuestionCase], ctx: ScoringContext) -> ExperimentTypeResult | None:
    """Score the answer type (resource, string, number, date, boolean) of each question."""
    gold = [_answer_types(c.gold, ctx.profile) for c in cases]
    system = [_answer_types(c.system if c.error is None else None, ctx.profile) for c in cases]
    if not any(gold) and not any(system):
        return None
    comps = [count_equal(g, s) for g, s in zip(gold, system, strict=True)]
    return _fmeasure(ATYPE, cases, comps, qald=True)


def _iri_comparison(
    gold: Sequence[str], system: Sequence[str], ctx: ScoringContext
) -> tuple[Comparison, Comparison, Comparison]:
    # returns (all markings, InKB only, EE only); the last two only matter for gerbil profiles
    if not ctx.profile.classify_emerging:
        return (
            _strict_iris(gold, system, ctx.lookups),
            Comparison(Counts(), (), (), ()),
            Comparison(Counts(), (), (), ()),
        )
    expand = ctx.lookups.gerbil_expand
    g = [Meaning(u, expand(u)) for u in gold]
    s = [Meaning(u, expand(u)) for u in system]
    out = []
    for keep in (None, True, False):
        gg = [m for m in g if keep is None or mt.is_in_kb(m) == keep]
        ss = [m for m in s if keep is None or mt.is_in_kb(m) == keep]
        pairs = mt.greedy_meanings(gg, ss, emerging=True)
        counts = Counts(len(pairs), len(ss) - len(pairs), len(gg) - len(pairs))
        matches = tuple(Match(gg[i].text, ss[j].text, r) for i, j, r in pairs)
        out.append(
            Comparison(counts, tuple(m.text for m in gg), tuple(m.text for m in ss), matches)
        )
    return out[0], out[1], out[2]


def _strict_iris(gold: Sequence[str], system: Sequence[str], lookups: Lookups) -> Comparison:
    def keys(iri: str) -> frozenset[str]:
        return frozenset(uri_key(u) for u in lookups.same_as(iri))

    gold_keys = [keys(u) for u in gold]
    system_keys = [keys(u) for u in system]
    edges = [[j for j, sk in enumerate(system_keys) if gk & sk] for gk in gold_keys]
    pairs = mt.maximum_matching(edges, len(system))

    def rule(g: str, s: str) -> Rule:
        return Rule.EXACT if g == s else Rule.URI if uri_key(g) == uri_key(s) else Rule.SAME_AS

    counts = Counts(len(pairs), len(system) - len(pairs), len(gold) - len(pairs))
    matches = tuple(
        Match(gold[i], system[j], rule(gold[i], system[j])) for i, j in sorted(pairs.items())
    )
    return Comparison(counts, tuple(gold), tuple(system), matches)


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
    triples = [_iri_comparison(g, s, ctx) for g, s in zip(gold, system, strict=True)]
    extra: list[MeasureValue] = []
    if ctx.profile.classify_emerging:
        for prefix, part in (("inkb", 1), ("ee", 2)):
            counts = [t[part].counts for t in triples]
            macro = metrics.macro([metrics.prf(c) for c in counts])
            extra.append(MeasureValue(f"{prefix}_micro_f1", metrics.micro(counts).f1))
            extra.append(_value(f"{prefix}_macro_f1", macro.f1 if macro else None, NO_QUESTIONS))
    return _fmeasure(experiment_type, cases, [t[0] for t in triples], extra, qald=False)


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


def _position_keys(term: Term | None, ctx: ScoringContext) -> frozenset[object] | None:
    if term is None:
        return None
    if ctx.profile.classify_emerging:
        if isinstance(term, NamedNode):
            return frozenset(ctx.lookups.gerbil_expand(term.value))
        return frozenset({("literal", term.value)})
    if isinstance(term, NamedNode):
        return frozenset(("iri", uri_key(u)) for u in ctx.lookups.same_as(term.value))
    return frozenset({value_key(term)})


def _relation_equal(g: Relation, s: Relation, ctx: ScoringContext) -> bool:
    if (g.predicate is None) != (s.predicate is None):
        return False
    gp, sp = g.predicate, s.predicate
    # GERBIL compares predicates as written; strict through uri_key (http/https, ...)
    normalised = not ctx.profile.classify_emerging and uri_key(gp or "") == uri_key(sp or "")
    if gp != sp and not normalised:
        return False
    for a, b in ((g.subject, s.subject), (g.object, s.object)):
        ka, kb = _position_keys(a, ctx), _position_keys(b, ctx)
        if (ka is None) != (kb is None) or (ka is not None and kb is not None and not ka & kb):
            return False
    return True


def _show(r: Relation) -> str:
    def term(t: Term | None) -> str:
        return "?" if t is None else str(t)

    return f"{term(r.subject)} {r.predicate or '?'} {term(r.object)}"


def re2kb(cases: Sequence[QuestionCase], ctx: ScoringContext) -> ExperimentTypeResult | None:
    """Score the triple patterns; variables are wildcards that equal each other only."""
    gold = [c.gold_markings.relations for c in cases]
    system = [c.system_markings.relations for c in cases]
    if not any(gold) and not any(system):
        return None
    comps = []
    for g, s in zip(gold, system, strict=True):
        edges = [[j for j, sr in enumerate(s) if _relation_equal(gr, sr, ctx)] for gr in g]
        if ctx.profile.classify_emerging:  # GERBIL: first unused equal element, in gold order
            used: set[int] = set()
            pairs: dict[int, int] = {}
            for i, options in enumerate(edges):
                j = next((j for j in options if j not in used), None)
                if j is not None:
                    used.add(j)
                    pairs[i] = j
        else:
            pairs = mt.maximum_matching(edges, len(s))
        counts = Counts(len(pairs), len(s) - len(pairs), len(g) - len(pairs))
        matches = tuple(
            Match(_show(g[i]), _show(s[j]), Rule.EXACT if g[i] == s[j] else Rule.SAME_AS)
            for i, j in sorted(pairs.items())
        )
        comps.append(Comparison(counts, tuple(map(_show, g)), tuple(map(_show, s)), matches))
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
