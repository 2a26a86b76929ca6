"""The evaluation entry point: gold dataset + system answers -> ``EvaluationResult``.

``evaluate`` prepares one case per gold question (its text in the evaluation language must exist,
as in GERBIL), derives query markings once per distinct query, and runs every experiment type of
the profile. It is pure apart from the knowledge-base lookups a caller enables by passing ``kb``.
``breakdowns`` regroups the per-question results by answer type, aggregation, hybrid and language.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass

from evaluators.errors import UnknownSubExperimentError
from evaluators.knowledge.bases import KnowledgeBase
from evaluators.model import Dataset, Question
from evaluators.qa import text2sparql
from evaluators.qa.answer_matching import Lookups
from evaluators.qa.markings import Markings, query_markings
from evaluators.qa.profiles import profile as find_profile
from evaluators.qa.subexperiments import (
    SUBEXPERIMENTS,
    QuestionCase,
    ScoringContext,
    aggregate,
)
from evaluators.results import (
    AIT2KB,
    C2KB,
    P2KB,
    QA,
    RE2KB,
    EvaluationResult,
    ExperimentTypeResult,
    MeasureValue,
    QuestionScore,
)
from evaluators.significance import DEFAULT_BOOTSTRAP_SAMPLES

_MARKED = frozenset({C2KB, P2KB, RE2KB, AIT2KB})


def gold_as_answers(dataset: Dataset) -> dict[str, Question]:
    """Return the dataset's own questions as a system-answers mapping (a perfect system).

    >>> from evaluators.model import SourceFormat
    >>> gold_as_answers(Dataset(SourceFormat.QALD_JSON, (Question("1"),)))
    {'1': Question(id='1', texts=(), answer_type=None, answer_type_label=None, aggregation=None, \
only_dbo=None, hybrid=None, sparql=None, pseudo_query=None, schemaless_query=None, answers=None, \
answer_item_types=(), annotations=(), confidence=None, out_of_scope=False, bioasq=None, \
text2sparql=None, reply=None, choices=None, execution=None)}
    """
    return dataset.by_id()


def evaluate(
    dataset: Dataset,
    answers: Mapping[str, Question],
    *,
    profile: str = "strict",
    language: str = "en",
    kb: KnowledgeBase | None = None,
    dataset_label: str = "",
    errors: Mapping[str, str] | None = None,
    millis: Mapping[str, float] | None = None,
    bootstrap_samples: int = DEFAULT_BOOTSTRAP_SAMPLES,
    seed: int = 0,
    markings_cache: MutableMapping[tuple[str, str], Markings] | None = None,
    question_notes: Mapping[str, str] | None = None,
) -> EvaluationResult:
    """Score system answers against a gold dataset under a scoring profile.

    Args:
        dataset: the gold dataset.
        answers: the system's answers by question id; a missing id means no answer.
        profile: ``strict`` (default), ``gerbil``, ``gerbil-legacy``, ``qald-classic``,
            ``text2sparql`` or ``text2sparql-corrected``.
        language: questions without a text in this language are left out (GERBIL does so);
            also the language of label lookups.
        kb: knowledge base for owl:sameAs and label lookups (none: no lookups).
        dataset_label: the name that goes into the result.
        errors: question id -> message, for questions whose system call failed (scored as
            unanswered and counted in ``errors``).
        millis: question id -> wall time of successful calls (``avg_millis``).
        bootstrap_samples: resamples for the macro F1 confidence interval.
        seed: random seed of the bootstrap.
        markings_cache: a mapping the caller keeps to reuse query markings across evaluations
            (parsing SPARQL is the costliest step); by default one per call.
        question_notes: question id -> a remark shown with that question's result (the
            TEXT2SPARQL profiles: where the reference query gives another result here).

    Returns:
        Every experiment type the profile evaluates and that applies, with per-question scores.

    Raises:
        UnknownSubExperimentError: if ``profile`` is not a known profile id.
    """
    rules = find_profile(profile)
    if rules.family_scored:
        raise UnknownSubExperimentError(
            f"the {profile} profile is scored by its own family, not by QA scoring; use "
            "evaluators.experiments.task.score_replies (or qabench evaluate)"
        )
    errors = errors or {}
    millis = millis or {}
    gold_ids = {q.id for q in dataset.questions}
    unknown = tuple(i for i in answers if i not in gold_ids)
    kept = [q for q in dataset.questions if q.text(language) is not None]
    marks_needed = bool(_MARKED & set(rules.experiment_types))
    cache: MutableMapping[tuple[str, str], Markings] = (
        {} if markings_cache is None else markings_cache
    )

    def marks(question: Question | None) -> Markings:
        # GERBIL derives markings from the SPARQL query only, never from a hybrid pseudo query
        if not marks_needed or question is None or not question.sparql:
            return Markings()
        key = (rules.markings.value, question.sparql)
        found = cache.get(key)
        if found is None:
            found = cache[key] = query_markings(question.sparql, rules.markings)
        return found

    cases = []
    for q in kept:
        error = errors.get(q.id)
        system = answers.get(q.id)
        usable = system if error is None else None
        cases.append(
            QuestionCase(q.id, q, system, error, millis.get(q.id), marks(q), marks(usable))
        )
    lookups = Lookups(kb, language)
    ctx = ScoringContext(rules, lookups, bootstrap_samples, seed)
    results = []
    if rules.is_text2sparql:
        results.append(text2sparql.score(cases, rules.id, question_notes))
    for experiment_type in () if rules.is_text2sparql else rules.experiment_types:
        result = SUBEXPERIMENTS[experiment_type](cases, ctx)
        if result is not None:
            results.append(result)
    notes = _notes(dataset, kept, cases, language, lookups)
    label = dataset_label or dataset.source_id or ""
    return EvaluationResult(
        label, rules.id, language, len(cases), tuple(results), unknown, tuple(notes)
    )


def _notes(
    dataset: Dataset, kept: list[Question], cases: list[QuestionCase], language: str,
    lookups: Lookups,
) -> list[str]:  # fmt: skip
    notes = []
    if len(kept) < len(dataset.questions):
        missing = len(dataset.questions) - len(kept)
        notes.append(f"{missing} question(s) left out: no question text in {language!r}")
    broken = sorted({c.id for c in cases if c.gold.sparql and c.gold_markings.problem})
    if broken:
        notes.append(
            f"{len(broken)} gold quer(y/ies) gave no or partial markings, e.g. question "
            f"{broken[0]}: {next(c.gold_markings.problem for c in cases if c.id == broken[0])}"
        )
    if lookups.failures:
        notes.append(f"{lookups.failures} knowledge-base lookup(s) failed and counted as empty")
    if lookups.merged:
        notes.append(
            f"{lookups.merged} system answer(s) counted once with another answer to the same "
            "question: both expand to the same owl:sameAs set (GERBIL merges them)"
        )
    return notes


@dataclass(frozen=True, slots=True)
class Breakdown:
    """QA measures of the questions that share one value of one question property."""

    dimension: str  # answer_type | aggregation | hybrid | language
    group: str  # e.g. "resource", "true", "unknown", "de"
    questions: int
    measures: tuple[MeasureValue, ...]


def _flag(value: bool | None) -> str:
    return "unknown" if value is None else str(value).lower()


def breakdowns(
    result: EvaluationResult, dataset: Dataset, *, experiment_type: str = QA
) -> tuple[Breakdown, ...]:
    """Regroup one experiment type's per-question scores by question properties.

    Groups: the gold answer type, the aggregation and hybrid flags ("unknown" when the dataset
    does not say), and the language the questions were asked in (``result.language``; a score
    is never shown under a language that was not asked). Each group gets micro/macro P/R/F1
    and Macro F1 QALD over its questions.

    Returns:
        The groups in the order dimension, then group name; nothing if the type was not scored.
    """
    scored: ExperimentTypeResult | None = result.get(experiment_type)
    if scored is None:
        return ()
    questions = dataset.by_id()
    groups: dict[tuple[str, str], list[QuestionScore]] = defaultdict(list)
    for score in scored.per_question:
        q = questions.get(score.question_id)
        if q is None:
            continue
        answer_type = q.answer_type.value if q.answer_type is not None else "unknown"
        groups[("answer_type", answer_type)].append(score)
        groups[("aggregation", _flag(q.aggregation))].append(score)
        groups[("hybrid", _flag(q.hybrid))].append(score)
        if q.text(result.language) is not None:
            groups[("language", result.language)].append(score)
    return tuple(
        Breakdown(
            dim, group, len(scores), (*aggregate(scores), MeasureValue("questions", len(scores)))
        )
        for (dim, group), scores in sorted(groups.items())
    )
