"""The leaderboard: the best published result per system on one dataset version and type.

``/leaderboard?version=<version IRI>&type=<experiment type>&profile=<profile|any>`` ranks every
system by its best task: QALD-style types by macro F1, then micro F1 (as GERBIL's leaderboard
did); BioASQ types by their main measure (``RANKING``). It reads only published experiments:
the query runs on the query workers over the public replica (time limit included), never on
graphs a token opened. The page draws the ranking as an inline SVG bar chart and links every
row to its experiment and task, and to the SPARQL query behind the table.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass

from flask import Blueprint, Response, render_template, request
from pyoxigraph import NamedNode

from evaluators import cube
from evaluators.datasets.library import list_versions
from evaluators.experiments.results import type_name
from evaluators.qa.profiles import PROFILE_TERMS
from evaluators.results import BIOASQ_PROFILE, BIOASQ_TYPES, EXPERIMENT_TYPES, MEASURES, QA_TYPES
from server.pages.charts import bar_chart
from server.pages.compare import DATA_FORMS
from server.pages.pagination import link_header, page_number, paginate
from server.pages.tables import column, format_value
from server.services import Services, services
from server.sparql.endpoint import RESULT_TYPES
from server.sparql.jobs import QueryJob
from server.sparql.page import query_link
from server.sparql.workers import PoolError
from server.web.problems import Problem
from store import graphs, queries

bp = Blueprint("leaderboard", __name__)

# Measures that rank the systems of a type: the first decides, the second breaks ties.
RANKING: dict[str, tuple[str, str]] = {
    **{t: ("macro_f1", "micro_f1") for t in QA_TYPES},
    "documents": ("map", "mean_f1"),
    "snippets": ("map", "mean_f1"),
    "concepts": ("map", "mean_f1"),
    "yesno": ("accuracy", "macro_f1"),
    "factoid": ("mrr", "strict_accuracy"),
    "list": ("mean_f1", "mean_precision"),
    "ideal": ("rouge2_f1", "rougesu4_f1"),
}
_PROFILE_BY_TERM = {term.value: name for name, term in PROFILE_TERMS.items()}
ANY = "any"


@dataclass(frozen=True, slots=True)
class Entry:
    """A system's best task on the board."""

    system: str
    label: str
    first: float | None
    second: float | None
    task: str
    experiment: str | None
    created: str | None
    language: str
    profile: str
    tasks: int


def _number(value: float | None) -> float:
    return -math.inf if value is None else value


def best_per_system(rows: Iterable[dict[str, str]], ranking: tuple[str, str]) -> list[Entry]:
    """Return each system's best task by the two ranking measures, best system first.

    Args:
        rows: query rows with ``task``, ``system``, ``measure`` (an id) and ``value``, plus
            optional ``label``, ``experiment``, ``created``, ``language`` and ``profile``.
        ranking: the deciding and the tie-breaking measure ids.
    """
    tasks: dict[str, dict[str, str]] = {}
    values: dict[str, dict[str, float]] = {}
    for row in rows:
        tasks.setdefault(row["task"], row)
        values.setdefault(row["task"], {})[row["measure"]] = float(row["value"])
    by_system: dict[str, list[str]] = {}
    for task, row in tasks.items():
        by_system.setdefault(row["system"], []).append(task)

    def key(task: str) -> tuple[float, float, str]:
        found = values[task]
        return (_number(found.get(ranking[0])), _number(found.get(ranking[1])), task)

    entries = []
    for system, owned in by_system.items():
        best = max(owned, key=key)
        row, found = tasks[best], values[best]
        entries.append(
            Entry(
                system,
                row.get("label") or system.rsplit("/", 1)[-1],
                found.get(ranking[0]),
                found.get(ranking[1]),
                best,
                row.get("experiment"),
                row.get("created"),
                row.get("language", ""),
                row.get("profile", ""),
                len(owned),
            )
        )
    entries.sort(key=lambda e: (-_number(e.first), -_number(e.second), e.label))
    return entries


def _type_term(svc: Services, raw: str) -> tuple[str, NamedNode]:
    if raw in EXPERIMENT_TYPES:
        return raw, cube.experiment_type_term(svc.base, raw)
    try:
        term = NamedNode(raw)
    except ValueError as exc:
        known = ", ".join(EXPERIMENT_TYPES)
        raise Problem(
            400, f"Unknown experiment type {raw[:60]!r}; expected one of: {known}"
        ) from exc
    return type_name(term), term


def board_query(version: NamedNode, kind: NamedNode, ranking: tuple[str, str]) -> str:
    """Return the leaderboard query with its version, type and measures bound by ``VALUES``."""
    measures = " ".join(str(MEASURES[m].term) for m in ranking)
    values = f"VALUES (?version ?type) {{ ({version} {kind}) }}\n  VALUES ?measure {{ {measures} }}"
    return queries.load("page_leaderboard").replace("#BINDINGS#", values)


def _rows(svc: Services, text: str) -> list[dict[str, str]]:
    job = QueryJob(
        text,
        f"{svc.base}/sparql",
        str(svc.view().path),  # the public view: published experiments only
        None,
        None,
        RESULT_TYPES[0],
        None,
        svc.config.server.max_result_rows,
        f"{svc.base}/sparql#truncation",
    )
    try:
        outcome = svc.pool.run(job)
    except PoolError as exc:
        raise Problem(
            503, f"The leaderboard query did not finish: {exc}.", headers={"Retry-After": "2"}
        ) from exc
    if outcome.failure is not None:
        raise Problem(500, "The leaderboard query failed.")
    by_term = {info.term.value: key for key, info in MEASURES.items()}
    rows = []
    for binding in json.loads(outcome.body)["results"]["bindings"]:
        row = {name: cell["value"] for name, cell in binding.items()}
        row["measure"] = by_term.get(row.get("measure", ""), "")
        row["profile"] = _PROFILE_BY_TERM.get(row.get("profile", ""), row.get("profile", ""))
        rows.append(row)
    return rows


@bp.route("/leaderboard")
def leaderboard() -> Response:
    """Best published result per system for one dataset version and experiment type."""
    svc = services()
    version = request.args.get("version", "").strip()
    kind, term = _type_term(svc, request.args.get("type", "").strip() or "QA")
    ranking = RANKING.get(kind, RANKING["QA"])
    default_profile = (
        BIOASQ_PROFILE if kind in BIOASQ_TYPES else svc.config.evaluation.default_profile
    )
    profile = request.args.get("profile", "").strip() or default_profile
    if profile != ANY and profile not in PROFILE_TERMS:
        known = ", ".join((ANY, *PROFILE_TERMS))
        raise Problem(400, f"Unknown profile {profile[:40]!r}; expected one of: {known}")
    entries: list[Entry] = []
    text = ""
    if version:
        try:
            version_term = NamedNode(version)
        except ValueError as exc:
            raise Problem(400, "Pass ?version= as the absolute IRI of a dataset version.") from exc
        text = board_query(version_term, term, ranking)
        # Published results change only with the store: one query per generation and board.
        found: list[dict[str, str]] = svc.cache.get_or_make(
            svc.generation, f"leaderboard {text}", lambda: _rows(svc, text)
        )
        rows = [r for r in found if profile == ANY or r["profile"] == profile]
        entries = best_per_system(rows, ranking)
    page = paginate(entries, len(entries), page_number(), svc.config.server.page_size)
    links = page.neighbours(request.path)
    entries = page.rows
    label = column(ranking[0]).label
    chart = bar_chart(
        f"Best published {label} per system",
        [(e.label, e.first) for e in entries if e.first is not None],
    )
    body = render_template(
        "leaderboard.html",
        title="Leaderboard",
        version=version,
        kind=kind,
        profile=profile,
        versions=svc.cache.get_or_make(
            svc.generation, "leaderboard-versions", lambda: _versions(svc)
        ),
        types=EXPERIMENT_TYPES,
        profiles=(ANY, *PROFILE_TERMS),
        columns=(column(ranking[0]), column(ranking[1])),
        entries=entries,
        first_rank=page.offset + 1,
        page=page,
        prev_url=links.get("prev"),
        next_url=links.get("next"),
        chart=chart,
        format_value=format_value,
        ranking=ranking,
        query_href=query_link(text) if text else None,
        alternates=[(query_link(text, f), m, label) for f, m, label in DATA_FORMS] if text else [],
    )
    return link_header(Response(body, mimetype="text/html"), page, request.path)  # type: ignore[arg-type]


def _versions(svc: Services) -> list[tuple[str, str]]:
    """Return ``(IRI, label)`` of every public dataset version, for the form's suggestions."""
    if not svc.visibility().can_see(graphs.catalog_graph(svc.base)):
        return []
    # list_versions only uses what every RdfStore offers.
    found = list_versions(svc.store, svc.base)
    return [(v.iri, f"{v.name} v{v.version}") for v in found]
