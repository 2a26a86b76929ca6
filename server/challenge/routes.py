"""The TEXT2SPARQL'26 leaderboards (``/challenge/text2sparql-2026``), each cell naming its run.

The challenge's tables, built from the published experiments of this server: for each of its
datasets (loaded under the names ``ck26`` and ``db26``, newest version), every published task
scored under ``text2sparql-2026``; per system the run that counts is the newest finished one
that no recorded rerun supersedes (``server.challenge.reruns``: a rerun replaces an
earlier run, as the organisers' reruns did), and the page says which run each row uses, how
many runs the system has and which run it reruns. The tables: per dataset over all languages and
per language (CK26 ranked by ``set_F_ndcg``, DB26 by ``set_F``) and the overall table (the mean
of the two datasets' ``set_F``, recall and precision) with the English one beside it
(``evaluators.reports.challenge``). The averages are the official file's
(``evaluators.qa.text2sparql_file``), rebuilt from each run's stored per-question values, so
the page shows the digits the challenge would publish. ``Accept: application/json`` (or
``?format=json``) gives the tables as JSON. Reads published experiments only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from flask import Blueprint, Response, render_template
from pyoxigraph import NamedNode

from evaluators import cube
from evaluators.datasets import library
from evaluators.errors import UnknownDatasetError
from evaluators.experiments.results import text2sparql_eval
from evaluators.qa.profiles import PROFILE_TERMS
from evaluators.qa.text2sparql_file import OFFICIAL_2026
from evaluators.reports.challenge import (
    DATASETS_2026,
    ChallengeTable,
    dataset_tables,
    overall_tables,
)
from evaluators.results import MEASURES, QA
from server.challenge.reruns import counted, recorded_reruns
from server.linked_data.pipeline import Reader, Resource, serve
from server.web.problems import Problem
from server.web.representations import HTML, JSON_REPORT

bp = Blueprint("challenge", __name__)

LANGUAGES = {"": "all languages", "de": "German", "en": "English", "es": "Spanish"}
# a task counts once it has an aggregate set_F (finished and scored)
_SET_F = MEASURES["set_f"].term.value


@dataclass(frozen=True, slots=True)
class Run:
    """The run a row uses: its task, experiment, and how many runs the system has there."""

    task: str
    experiment: str
    label: str
    runs: int
    rerun_of: str | None = None  # the task this one reruns (qab:rerunOf), when recorded


@dataclass(frozen=True, slots=True)
class ChallengeBoard:
    """The challenge's tables as loaded for one request."""

    datasets: tuple[tuple[str, str, str], ...]  # (prefix, version label, version IRI) found
    missing: tuple[str, ...]  # dataset prefixes without a loaded version
    tables: tuple[ChallengeTable, ...]
    runs: dict[str, Run]  # task IRI -> the run
    labels: dict[str, str]  # system IRI -> label


def _counted_runs(
    reader: Reader, version: str, profile: NamedNode
) -> dict[str, list[tuple[Any, Any]]]:
    """Return system -> its published finished tasks under ``profile`` (oldest first)."""
    svc = reader.svc
    kind = cube.experiment_type_term(svc.base, QA).value
    found: dict[str, list[tuple[Any, Any]]] = {}
    for entry, scores in svc.experiments.board(version, kind, svc.visibility().can_see):
        if scores.profile == profile.value and scores.value(_SET_F) is not None:
            found.setdefault(scores.system, []).append((entry, scores))
    for runs in found.values():
        runs.sort(key=lambda pair: (pair[0].started or "", pair[1].task))
    return found


def _collect(reader: Reader) -> ChallengeBoard:
    svc = reader.svc
    profile = PROFILE_TERMS[OFFICIAL_2026]
    datasets: list[tuple[str, str, str]] = []
    missing: list[str] = []
    per_dataset: dict[str, dict[str, tuple[str, dict[str, Any]]]] = {}
    tables: list[ChallengeTable] = []
    runs: dict[str, Run] = {}
    labels: dict[str, str] = {}
    reruns = recorded_reruns(svc.store)
    for prefix, ranking in DATASETS_2026:
        try:
            info = library.resolve_version(svc.store, svc.base, prefix)
        except UnknownDatasetError:
            missing.append(prefix)
            continue
        version = info.iri
        datasets.append((prefix, f"{info.name}/v{info.version}", version))
        gold = library.read_dataset(svc.store, info)
        chosen: dict[str, tuple[str, dict[str, Any]]] = {}
        for system, tasks in _counted_runs(reader, version, profile).items():
            by_task = {scores.task: (entry, scores) for entry, scores in tasks}
            entry, scores = by_task[counted([s.task for _, s in tasks], reruns)]
            doc = text2sparql_eval(svc.store, svc.base, entry.id, scores.task, gold, OFFICIAL_2026)
            if doc is None:
                continue
            labels.update({s.iri: s.label for s in entry.systems})
            number = scores.task.rsplit("/", 1)[-1]
            old = next((o for o, n in reruns.items() if n == scores.task), None)
            label = f"{entry.id} task {number}"
            runs[scores.task] = Run(scores.task, entry.iri, label, len(tasks), old)
            chosen[system] = (scores.task, doc)
        per_dataset[prefix] = chosen
        tables += dataset_tables(prefix, ranking, chosen)
    if len(per_dataset) == len(DATASETS_2026) and all(per_dataset.values()):
        tables += overall_tables(per_dataset)
    return ChallengeBoard(tuple(datasets), tuple(missing), tuple(tables), runs, labels)


def _load(reader: Reader) -> ChallengeBoard:
    return reader.svc.remember("challenge text2sparql-2026", lambda: _collect(reader))


def _html(_reader: Reader, board: ChallengeBoard) -> str:
    return render_template(
        "challenge.html",
        title="TEXT2SPARQL'26 leaderboards",
        board=board,
        languages=LANGUAGES,
    )


def _json(_reader: Reader, board: ChallengeBoard) -> str:
    doc = {
        "challenge": "text2sparql-2026",
        "profile": OFFICIAL_2026,
        "datasets": [{"name": n, "version": label, "iri": iri} for n, label, iri in board.datasets],
        "missing": list(board.missing),
        "tables": [
            {
                "dataset": t.dataset,
                "language": t.language,
                "columns": list(t.columns),
                "rows": [
                    {
                        "system": board.labels.get(c.system, c.system),
                        "values": list(c.values),
                        "runs": [_run_json(board, r) for r in c.run.split("; ")],
                    }
                    for c in t.rows
                ],
            }
            for t in board.tables
        ],
    }
    return json.dumps(doc, ensure_ascii=False)


def _run_json(board: ChallengeBoard, run: str) -> dict[str, object]:
    task = run.split(": ", 1)[-1]
    found = board.runs.get(task)
    if found is None:
        return {"task": task}
    out: dict[str, object] = {
        "task": found.task,
        "experiment": found.experiment,
        "of_runs": found.runs,
    }
    if found.rerun_of is not None:
        out["rerun_of"] = found.rerun_of
    return out


CHALLENGE: Resource[ChallengeBoard] = Resource(
    formats=(HTML, JSON_REPORT),
    load=_load,
    html=_html,
    extra=((JSON_REPORT, _json),),
    documents=False,
    public=True,
)


@bp.route("/challenge/<name>")
def challenge(name: str) -> Response:
    """The leaderboards of a TEXT2SPARQL challenge edition (``text2sparql-2026``)."""
    if name != "text2sparql-2026":
        raise Problem(404, f"No challenge {name[:40]!r}; known: text2sparql-2026")
    return serve(CHALLENGE, f"/challenge/{name}")
