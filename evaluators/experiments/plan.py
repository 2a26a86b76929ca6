"""Turn an experiment request into checked systems and numbered tasks, before anything runs.

Everything that can be wrong with a submission is found here and raised at once: unknown
datasets or profiles, unknown built-in systems, malformed URLs, and answer files that do not
fit their dataset. Reads the store (dataset versions) and answer files; writes nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from evaluators.datasets import library
from evaluators.datasets.library import VersionInfo
from evaluators.errors import (
    AnswerFileError,
    DatasetFormatError,
    EvaluationError,
    NoQuestionsError,
    UnknownDatasetError,
    UnknownSubExperimentError,
    UnknownSystemError,
)
from evaluators.experiments.model import SystemDescription, TaskPlan
from evaluators.formats.mirage.predictions import is_predictions_path
from evaluators.formats.mirage.predictions import pack as pack_predictions
from evaluators.model import ALL_LANGUAGES, Dataset, SourceFormat, language_key
from evaluators.qa.profiles import PROFILE_TERMS, PROFILES
from evaluators.results import BIOASQ_PROFILE
from evaluators.systems.answer_files import (
    AnswerFileSystem,
    answer_file_system,
    ignored_ids_warning,
)
from evaluators.systems.protocol import SystemKind, check_service_url, public_url
from evaluators.systems.registry import SystemRegistry
from store.protocol import RdfStore
from vocab import iris


@dataclass(frozen=True, slots=True)
class SystemRequest:
    """A system as submitted. ``url`` may hold credentials: it is used, never stored."""

    name: str
    kind: SystemKind
    url: str | None = None
    builtin: str | None = None
    answers_path: Path | None = None
    answers_dataset: str | None = None  # dataset ref; default: the single dataset
    description: str = ""


@dataclass(frozen=True, slots=True)
class ExperimentRequest:
    """What to run: systems x datasets x languages x profiles."""

    systems: tuple[SystemRequest, ...]
    datasets: tuple[str, ...]
    languages: tuple[str, ...] = ("en",)
    profiles: tuple[str, ...] = ("strict",)
    owner: str = ""
    publish: bool = False
    # a loaded KB name or a SPARQL endpoint URL (may hold credentials: used, never stored) for
    # owl:sameAs and labels and for running SPARQL-only answers; None: the runner's default
    # (evaluation.kb), "": none
    kb: str | None = None
    # refuse answers files with ids their dataset lacks (else they are ignored with a warning);
    # None: the runner's default (evaluation.strict_ids)
    strict_ids: bool | None = None


@dataclass(frozen=True, slots=True)
class PlannedExperiment:
    """A checked request: descriptions to store, tasks, and the answer files already read."""

    systems: tuple[SystemDescription, ...]
    tasks: tuple[TaskPlan, ...]
    answer_files: dict[str, AnswerFileSystem]
    answer_paths: dict[str, str]
    urls: dict[str, str]


def new_experiment_id(existing: Sequence[str], today: date) -> str:
    """Return the next id ``YYYYMMDDNNNN`` (the counter restarts every day, GERBIL §6.4).

    >>> new_experiment_id(["201410100009"], date(2014, 10, 10))
    '201410100010'
    >>> new_experiment_id(["201410100009"], date(2014, 10, 11))
    '201410110000'

    Raises:
        EvaluationError: if 10,000 experiments were already created today.
    """
    prefix = today.strftime("%Y%m%d")
    used = [int(e[8:]) for e in existing if len(e) == 12 and e.startswith(prefix) and e.isdigit()]
    counter = max(used, default=-1) + 1
    if counter > 9999:
        raise EvaluationError(f"10,000 experiments were created on {prefix}; try again tomorrow")
    return f"{prefix}{counter:04d}"


def plan_experiment(
    store: RdfStore,
    base: str,
    request: ExperimentRequest,
    *,
    registry: SystemRegistry,
    limits_timeout: float,
    limits_concurrency: int,
    max_file_bytes: int,
    strict_ids: bool = False,
) -> PlannedExperiment:
    """Check a request and number its tasks.

    ``strict_ids`` (unless the request says otherwise) refuses answers files with ids their
    dataset lacks; otherwise those ids are ignored and listed in the system's ``warnings``.

    Raises:
        UnknownDatasetError: if a dataset is not in the store.
        UnknownSubExperimentError: if a profile does not exist.
        UnknownSystemError: if a system is unusable (no URL, unknown built-in, name used twice).
        AnswerFileError: if an answers file does not parse or does not fit its dataset.
    """
    if not request.systems:
        raise UnknownSystemError("An experiment needs at least one system or answers file")
    if not request.datasets:
        raise UnknownDatasetError("An experiment needs at least one dataset")
    for profile in request.profiles:
        # the profiles evaluators.qa.scoring knows, and BioASQ's official rules
        if profile not in PROFILE_TERMS:
            known = ", ".join(PROFILE_TERMS)
            raise UnknownSubExperimentError(
                f"Unknown profile {profile!r}; expected one of: {known}"
            )
    versions = [library.resolve_version(store, base, ref) for ref in request.datasets]
    _check_names(request.systems, registry)
    descriptions: list[SystemDescription] = []
    targets: dict[str, list[VersionInfo]] = {}
    files: dict[str, AnswerFileSystem] = {}
    paths: dict[str, str] = {}
    urls: dict[str, str] = {}
    for system in request.systems:
        if system.kind.is_http:
            url = check_service_url(system.url or "")
            urls[system.name] = url
            descriptions.append(
                SystemDescription(
                    system.name,
                    system.kind,
                    url=public_url(url),
                    description=system.description,
                    owner=request.owner,
                    timeout_seconds=limits_timeout,
                    concurrency=limits_concurrency,
                )
            )
            targets[system.name] = versions
        elif system.kind is SystemKind.BUILT_IN:
            info = registry.info(system.builtin or system.name)
            descriptions.append(
                SystemDescription(
                    system.name,
                    system.kind,
                    builtin=info.name,
                    description=system.description or info.description,
                    owner=request.owner,
                    concurrency=info.concurrency,
                )
            )
            targets[system.name] = versions
        else:
            strict = strict_ids if request.strict_ids is None else request.strict_ids
            version, described, replay = _answer_file(
                store, base, system, versions, request.owner, max_file_bytes, strict
            )
            descriptions.append(described)
            files[system.name] = replay
            paths[system.name] = str(system.answers_path.resolve()) if system.answers_path else ""
            targets[system.name] = [version]
    _check_languages(targets, request.languages)
    tasks = _tasks(request, targets)
    return PlannedExperiment(tuple(descriptions), tasks, files, paths, urls)


def _check_names(systems: Sequence[SystemRequest], registry: SystemRegistry) -> None:
    """Refuse names that would make two systems one: a system's IRI is its name's slug
    (``vocab.iris.system_iri``), so ``gold``, ``GOLD`` and ``Gold!`` all name ``/system/gold``.

    Raises:
        UnknownSystemError: two systems of one slug, or a system other than a built-in named
            as that built-in (``gold``, any case).
    """
    slugs = [iris.slug(system.name) for system in systems]
    repeated = sorted(
        {s.name for s, key in zip(systems, slugs, strict=True) if slugs.count(key) > 1}
    )
    if repeated:
        raise UnknownSystemError(
            f"System name(s) used twice: {', '.join(repeated)} (names are compared as their "
            "IRIs spell them: case and punctuation aside)"
        )
    builtins = {iris.slug(name): name for name in registry.names()}
    for system, key in zip(systems, slugs, strict=True):
        builtin = builtins.get(key)
        if builtin is None:
            continue
        if system.kind is not SystemKind.BUILT_IN or (system.builtin or system.name) != builtin:
            raise UnknownSystemError(
                f"The system name {system.name!r} is reserved for the built-in system "
                f"{builtin!r} (it would merge into /system/{key}); choose another name"
            )


def _check_languages(targets: dict[str, list[VersionInfo]], languages: tuple[str, ...]) -> None:
    """Refuse a language a dataset has no question in (its tasks would score zero questions).

    Raises:
        NoQuestionsError: naming the language, the dataset and the languages it has.
    """
    if not languages:
        raise UnknownDatasetError("An experiment needs at least one language")
    for versions in targets.values():
        for version in versions:
            have = {language_key(lang) for lang in version.languages}
            if version.format == SourceFormat.TEXT2SPARQL.value:
                have.add(ALL_LANGUAGES)  # a question per language: 'mul' asks every one
            for language in languages:
                if language_key(language) not in have:
                    raise NoQuestionsError(
                        language,
                        tuple(sorted(have)),
                        version.questions,
                        dataset=f"{version.name}/v{version.version}",
                    )


def _answer_file(
    store: RdfStore,
    base: str,
    system: SystemRequest,
    versions: list[VersionInfo],
    owner: str,
    max_file_bytes: int,
    strict_ids: bool,
) -> tuple[VersionInfo, SystemDescription, AnswerFileSystem]:
    path = system.answers_path
    if path is None:
        raise AnswerFileError(f"Answers system {system.name!r} has no file")
    if system.answers_dataset:
        version = library.resolve_version(store, base, system.answers_dataset)
    elif len(versions) == 1:
        version = versions[0]
    else:
        raise AnswerFileError(
            f"Answers file {path.name}: say which dataset it answers, as FILE@DATASET, "
            "when the experiment has more than one dataset"
        )
    data = read_answers(path, max_file_bytes)
    gold = read_gold(store, version)
    replay = answer_file_system(data, source=path.name, gold=gold, strict_ids=strict_ids)
    label = f"{version.name}@{version.version}"
    described = SystemDescription(
        system.name,
        SystemKind.ANSWER_FILE,
        answers_file=path.name,
        answers_sha256=hashlib.sha256(data).hexdigest(),
        description=system.description,
        owner=owner,
        warnings=(ignored_ids_warning(path.name, label, replay.ignored),) if replay.ignored else (),
    )
    return version, described, replay


def read_answers(path: Path, max_file_bytes: int) -> bytes:
    """Read an answers file, refusing oversized or missing files.

    A directory of MIRAGE prediction files (or a path with ``{dataset}`` for each of MIRAGE's
    datasets) is read into one packed predictions document (``formats.mirage.predictions``).

    Raises:
        AnswerFileError: if the file is missing, unreadable or too large.
    """
    if is_predictions_path(path):
        try:
            return pack_predictions(path, max_bytes=max_file_bytes)
        except DatasetFormatError as exc:
            raise AnswerFileError(f"Predictions {path}: {exc.detail}") from exc
    try:
        size = path.stat().st_size
        if size > max_file_bytes:
            raise AnswerFileError(
                f"Answers file {path.name} has {size} bytes; the limit is {max_file_bytes} "
                "(datasets.max_file_bytes)"
            )
        return path.read_bytes()
    except OSError as exc:
        raise AnswerFileError(f"Cannot read answers file {path}: {exc.strerror}") from exc


def read_gold(store: RdfStore, version: VersionInfo) -> Dataset:
    """Read a dataset version's questions (the gold standard of its tasks)."""
    return library.read_dataset(store, version)


def task_profiles(version: VersionInfo, requested: tuple[str, ...]) -> tuple[str, ...]:
    """Return the profiles a dataset version is scored under.

    BioASQ datasets are always scored with BioASQ's official measures (profile ``bioasq``),
    whatever QA profiles were requested; QA datasets use the requested QA profiles.

    Raises:
        UnknownSubExperimentError: if only ``bioasq`` was requested for a QA dataset.
    """
    if version.is_bioasq:
        return (BIOASQ_PROFILE,)
    qa = tuple(p for p in requested if p != BIOASQ_PROFILE)
    if not qa:
        raise UnknownSubExperimentError(
            f"{version.name} is a QA dataset; the bioasq profile only scores BioASQ datasets. "
            f"Choose one of: {', '.join(PROFILES)}"
        )
    return qa


def _tasks(
    request: ExperimentRequest, targets: dict[str, list[VersionInfo]]
) -> tuple[TaskPlan, ...]:
    tasks: list[TaskPlan] = []
    for system in request.systems:
        for version in targets[system.name]:
            for language in request.languages:
                for profile in task_profiles(version, request.profiles):
                    tasks.append(
                        TaskPlan(
                            number=len(tasks) + 1,
                            system=system.name,
                            dataset=version.name,
                            version=version.version,
                            sha256=version.sha256,
                            language=language,
                            profile=profile,
                        )
                    )
    return tuple(tasks)
