"""``evaluate``: score one answers file against a dataset, the recipe behind ``qabench evaluate``.

The small public entry point of the benchmark (as ``ranx.evaluate`` is of ranx): give the gold
dataset and the bytes of a system's answers file, get an ``EvaluationResult``. The answers are
parsed once and replayed through the experiments' own path (``evaluators.experiments.task``:
``ask_questions`` then ``score_replies``), so the numbers equal those of an experiment run with
the same inputs and profile. QA data is scored under the chosen profile, BioASQ data always
under the official ``bioasq`` rules. With a knowledge base (a loaded KB's name, or a SPARQL
endpoint URL), sameAs and label lookups use it, and SPARQL-only answers (a query, no answers)
are run on it first unless ``execute`` is off; the result's notes say how many were run and
what went wrong. The file is checked as an experiment checks it (``answer_file_system``): ids
given twice are refused; ids the dataset lacks are ignored and reported in ``unknown_ids``
(GERBIL QA ignored them too), or refused with ``strict_ids``.

>>> from evaluators.formats import parse_bytes
>>> from pathlib import Path
>>> examples = Path(__file__).parent.parent / "server" / "examples"
>>> gold = parse_bytes((examples / "example-questions.json").read_bytes(), source="gold.json")
>>> answers = (examples / "example-answers.json").read_bytes()
>>> result = evaluate(gold, answers, Evaluation(profile="strict"))
>>> round(result.get("QA").value("macro_f1"), 4)
0.5625
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from evaluators.datasets import library
from evaluators.experiments.task import (
    AskSettings,
    Reply,
    ScoreSettings,
    ask_questions,
    executing,
    score_replies,
)
from evaluators.formats import parse_file
from evaluators.formats.text2sparql.writer import result_set
from evaluators.knowledge.bases import KnowledgeBase, open_kb
from evaluators.knowledge.endpoint import is_endpoint
from evaluators.knowledge.execution import (
    EndpointExecutor,
    ExecutionLimits,
    QueryExecutor,
    open_executor,
)
from evaluators.knowledge.measures import ExtraMeasures, Ran, extra_measures
from evaluators.knowledge.reference import lexical_reference_differences
from evaluators.model import ALL_LANGUAGES, Dataset, SourceFormat
from evaluators.qa import text2sparql, text2sparql_file
from evaluators.qa.profiles import PROFILES
from evaluators.results import BIOASQ_PROFILE, EvaluationResult, to_json
from evaluators.significance import DEFAULT_BOOTSTRAP_SAMPLES
from evaluators.systems.answer_files import answer_file_system
from evaluators.systems.protocol import RequestGate, public_url
from store.protocol import RdfStore

# Problems of SPARQL-only answers listed in the notes at most.
MAX_EXECUTION_NOTES = 20


@dataclass(frozen=True, slots=True)
class Evaluation:
    """How to score: profile, language, knowledge base, and the bounds of running queries.

    ``kb`` is a loaded knowledge base's name or an http(s) SPARQL endpoint URL ('' for none);
    ``store`` and ``base`` are needed for a loaded one.
    """

    profile: str = "strict"
    language: str = "en"
    kb: str = ""
    execute: bool = True
    limits: ExecutionLimits = field(default_factory=ExecutionLimits)
    bootstrap_samples: int = DEFAULT_BOOTSTRAP_SAMPLES
    bioasq_version: int = 8
    label: str = ""
    store: RdfStore | None = None
    base: str = ""
    strict_ids: bool = False


def read_gold(
    store: Callable[[], RdfStore], base: str, ref: str, max_bytes: int
) -> tuple[Dataset, str]:
    """Return the dataset ``ref`` names (a file, else ``NAME[@N]`` of a loaded one) and its label.

    ``store`` opens the store, only when a loaded dataset is named.

    Raises:
        EvaluationError: (a subclass) for an unreadable file or an unknown dataset.
    """
    path = Path(ref)
    if path.is_file():
        return parse_file(path, max_bytes=max_bytes), path.stem
    opened = store()
    info = library.resolve_version(opened, base, ref)
    return library.read_dataset(opened, info), f"{info.name}/v{info.version}"


def default_language(dataset: Dataset) -> str:
    """Return the language a dataset is evaluated in when none is asked for.

    English, except for TEXT2SPARQL data: its only language, else ``mul`` (every question in its
    own language, all together, as the official evaluation scores them).
    """
    if dataset.format is not SourceFormat.TEXT2SPARQL:
        return "en"
    languages = {lang for q in dataset.questions for lang in q.languages}
    return languages.pop() if len(languages) == 1 else ALL_LANGUAGES


def knowledge(spec: str, settings: Evaluation) -> tuple[KnowledgeBase | None, QueryExecutor | None]:
    """Return the knowledge base ``spec`` names and, when queries are run, its executor.

    Raises:
        KnowledgeBaseError: if ``spec`` names no loaded knowledge base.
    """
    if not spec:
        return None, None
    store = None if is_endpoint(spec) else settings.store
    kb = open_kb(store, settings.base, spec)
    if not settings.execute:
        return kb, None
    executor = open_executor(store, settings.base, spec, settings.limits)
    if isinstance(executor, EndpointExecutor):
        executor.description = public_url(spec)
    return kb, executor


def evaluate(
    gold: Dataset, answers: bytes, settings: Evaluation, *, source: str = "answers"
) -> EvaluationResult:
    """Score an answers file (its bytes) against ``gold``.

    Raises:
        AnswerFileError: if the answers cannot be parsed or do not fit the dataset (ids given
            twice; with ``settings.strict_ids`` also ids the dataset lacks).
        KnowledgeBaseError: if ``settings.kb`` names no knowledge base.
    """
    return evaluate_replies(gold, answers, settings, source=source).result


@dataclass(frozen=True, slots=True)
class Evaluated:
    """A scored answers file and the replies it was scored on (the answers as run), and the
    execution-based measures beside the official ones (TEXT2SPARQL profiles with a KB)."""

    result: EvaluationResult
    replies: dict[str, Reply]
    extra: ExtraMeasures | None = None


def evaluate_replies(
    gold: Dataset, answers: bytes, settings: Evaluation, *, source: str = "answers"
) -> Evaluated:
    """Score an answers file as ``evaluate`` does, and keep the replies (SPARQL-only answers
    replaced by their query's results) for the official files.

    Raises:
        AnswerFileError: if the answers cannot be parsed or do not fit the dataset (ids given
            twice; with ``settings.strict_ids`` also ids the dataset lacks).
        KnowledgeBaseError: if ``settings.kb`` names no knowledge base.
    """
    system = answer_file_system(answers, source=source, gold=gold, strict_ids=settings.strict_ids)
    kb, executor = knowledge("" if gold.is_bioasq else settings.kb, settings)
    ask = AskSettings(language=settings.language, error_tolerance=1.0, concurrency=1, timed=False)
    complete = executing(executor) if executor is not None else None
    replies = ask_questions(gold, system, RequestGate(1), ask, complete=complete).replies
    rules = PROFILES.get(settings.profile)
    notes = None
    if executor is not None and rules is not None and rules.is_text2sparql:
        # where the reference queries give another result here than the published gold
        notes = lexical_reference_differences(gold, executor)
    scoring = ScoreSettings(
        profile=BIOASQ_PROFILE if gold.is_bioasq else settings.profile,
        language=settings.language,
        dataset_label=settings.label or gold.source_id or "dataset",
        kb=kb,
        bootstrap_samples=settings.bootstrap_samples,
        bioasq_version=settings.bioasq_version,
        question_notes=notes,
    )
    result = _with_execution_notes(score_replies(gold, replies, scoring), replies)
    if notes:
        listed = ", ".join(list(notes)[:MAX_EXECUTION_NOTES])
        result = replace(result, notes=(
            *result.notes,
            f"{len(notes)} question(s) whose reference query gives another result on "
            f"{executor.description if executor else settings.kb} than the gold answers "
            f"(engine differences, shown with each question): {listed}",
        ))  # fmt: skip
    if system.ignored:
        result = replace(result, unknown_ids=system.ignored)
    extra = None
    if executor is not None and rules is not None and rules.is_text2sparql:
        extra = _extra_measures(gold, replies, executor, settings.language)
    return Evaluated(result, replies, extra)


def _extra_measures(
    gold: Dataset, replies: dict[str, Reply], executor: QueryExecutor, language: str
) -> ExtraMeasures:
    """Run the reference queries on the executor's KB and measure the replies against them."""
    asked = [q for q in gold.questions if q.text(language) is not None]
    systems: dict[str, Ran] = {}
    for qid, reply in replies.items():
        answer = reply.answer
        if answer is None or not answer.sparql or reply.executed is None:
            systems[qid] = Ran(had_query=bool(answer is not None and answer.sparql))
            continue
        boolean = answer.answers[0].boolean if answer.answers else None
        systems[qid] = Ran(reply.rows, boolean, reply.execution_problem)
    runs: dict[str, Ran] = {}
    references: dict[str, Ran] = {}
    for q in asked:
        if not q.sparql:
            continue
        if q.sparql not in runs:
            outcome = executor.run(q.sparql)
            flag = outcome.answers.boolean if outcome.answers is not None else None
            runs[q.sparql] = Ran(outcome.rows, flag, outcome.problem)
        references[q.id] = runs[q.sparql]
    ordered = frozenset(q.id for q in asked if q.text2sparql and q.text2sparql.order_matters)
    return extra_measures([q.id for q in asked], systems, references, ordered)


def extra_json(extra: ExtraMeasures) -> dict[str, Any]:
    """Return ``extra_measures`` of ``evaluate --json`` (apart from the official measures)."""
    return {"means": extra.means, "defined": extra.defined, "per_question": extra.per_question}


def official_files(evaluated: Evaluated, gold: Dataset) -> dict[str, dict[str, Any]]:
    """Return the official client's files of a TEXT2SPARQL evaluation, by file name: the
    evaluation, the system's result set (what it was scored on) and the reference result set
    (2025 names under ``text2sparql``, 2026 names under the other profiles); empty for other
    profiles.
    """
    doc = text2sparql.evaluation_json(evaluated.result, gold)
    if doc is None:
        return {}
    prefix = gold.source_id or "dataset"
    names = text2sparql_file.official_names(evaluated.result.profile, prefix)
    system: dict[str, dict[str, int]] = {}
    reference: dict[str, dict[str, int]] = {}
    for question in gold.questions:
        reply = evaluated.replies.get(question.id)
        answer = reply.answer if reply is not None and reply.error is None else None
        system[question.id] = result_set(answer.answers or ()) if answer is not None else {}
        reference[question.id] = result_set(question.answers or ())
    ordered = [q.id for q in gold.questions if q.text2sparql and q.text2sparql.order_matters]
    return {
        names.evaluation: doc,
        names.system_result_set: system,
        names.true_result_set: text2sparql_file.true_result_set(reference, ordered),
    }


def result_json(result: EvaluationResult, gold: Dataset) -> dict[str, Any]:
    """Return the ``qabench evaluate --json`` document of ``result``: every measure, and under a
    TEXT2SPARQL profile also the official file's shape (``text2sparql_eval``) and each
    question's engine difference (``text2sparql_reference_differences``)."""
    doc = to_json(result)
    official = text2sparql.evaluation_json(result, gold)
    if official is not None:
        doc["text2sparql_eval"] = official
        doc["text2sparql_reference_differences"] = text2sparql.question_notes(result)
    return doc


def _with_execution_notes(result: EvaluationResult, replies: dict[str, Reply]) -> EvaluationResult:
    """Add to the notes how many SPARQL-only answers were run, and what went wrong."""
    ran = [r for r in replies.values() if r.executed is not None]
    if not ran:
        return result
    failed = [r for r in ran if r.execution_problem is not None]
    notes = [
        f"{len(ran)} SPARQL-only answer(s) scored on the results of their query, run on "
        f"{ran[0].executed}"
    ]
    for r in failed[:MAX_EXECUTION_NOTES]:
        notes.append(f"question {r.question_id}: {r.execution_problem}")
    return replace(result, notes=(*result.notes, *notes))
