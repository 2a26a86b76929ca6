"""The leaderboard: the best published result per system on one dataset version and type.

``/leaderboard?version=<version IRI>&type=<experiment type>&profile=<profile|any>`` ranks every
system by its best task under the profile's headline measure (``evaluators.reports.headline``:
Macro F1 QALD for the GERBIL profiles and strict, processed F1 then F-1 Global for
qald-classic, macro F1 for C2KB-style types, the official main measure for BioASQ types);
``&measure=<id>`` ranks by another measure instead. Sanity systems (``gold``) are listed apart
and never ranked. It reads only published experiments, from the experiment index
(``server.listings``: each experiment's aggregate values per dataset version and type, so the
cost follows the tasks on the board), never graphs a token opened; the SPARQL query it links to
gives the same rows over the public endpoint. The page draws the
ranking as an inline SVG bar chart and links every row to its experiment and task, and to the
SPARQL query behind the table; ``Accept: text/csv`` (or ``?format=csv``) gives the board as CSV.
Ranking itself is pure (``evaluators.reports.leaderboard``), so other lists can reuse it.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass

import numpy as np
from flask import Blueprint, Response, render_template, request
from pyoxigraph import NamedNode

from evaluators import cube
from evaluators.experiments.results import type_name
from evaluators.qa.profiles import PROFILE_TERMS, profile_order
from evaluators.reports.charts import bar_chart
from evaluators.reports.headline import Ranked, headline, ranking_measures
from evaluators.reports.leaderboard import Entry, best_per_system, board, board_table, entry_json
from evaluators.reports.render import to_csv
from evaluators.results import (
    BIOASQ_PROFILE,
    BIOASQ_TYPES,
    EXPERIMENT_TYPES,
    INTERVALS,
    MEASURES,
)
from server.linked_data.pipeline import Reader, Resource, serve
from server.linked_data.terms import query_link
from server.pages.compare import DATA_FORMS
from server.pages.summaries import Dataset, dataset_of, profile_name
from server.pages.tables import column, format_value
from server.services import Services
from server.web.pagination import Page, page_links, page_number, paginate
from server.web.problems import Problem
from server.web.representations import CSV, HTML, JSON_REPORT
from store import queries

bp = Blueprint("leaderboard", __name__)

# The board as a page, as CSV for papers, or as JSON for scripts.
BOARD_FORMATS = (HTML, CSV, JSON_REPORT)

_PROFILE_BY_TERM = {term.value: name for name, term in PROFILE_TERMS.items()}
ANY = "any"


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


def board_rows(
    svc: Services, version: NamedNode, kind: NamedNode, ranking: tuple[str, str]
) -> list[dict[str, str]]:
    """Return the rows ``best_per_system`` ranks: the ranking values of every published task.

    Read from the experiment index (``server.listings``), which keeps each experiment's
    aggregate values per dataset version and type: the cost follows the tasks on the board,
    never the number of observations in the store. Published experiments only, whatever
    tokens the reader holds (as the query behind the table, run on the public view).
    """
    published = svc.visibility().can_see
    rows = []
    for entry, scores in svc.experiments.board(version.value, kind.value, published):
        labels = {s.iri: s.label for s in entry.systems}
        for measure in (*ranking, *INTERVALS.get(ranking[0], ())):
            value = scores.value(MEASURES[measure].term.value)
            if value is None:
                continue
            row = {
                "task": scores.task,
                "system": scores.system,
                "measure": measure,
                "value": repr(value),
                "label": labels.get(scores.system, ""),
                "experiment": entry.iri,
                "language": scores.language,
                "profile": _PROFILE_BY_TERM.get(scores.profile, scores.profile),
            }
            for name, found in (
                ("created", entry.started),
                ("kind", scores.kind),
                ("builtin", scores.builtin),
            ):
                if found is not None:
                    row[name] = found
            rows.append(row)
    return rows


@dataclass(frozen=True, slots=True)
class Available:
    """What a board (one dataset version and experiment type) has: its published tasks'
    systems and experiments, and how many tasks each profile scored."""

    dataset: Dataset
    systems: frozenset[str]
    experiments: int
    profiles: tuple[tuple[str, int], ...]  # strict first (profile_order)


def available_boards(svc: Services) -> dict[str, dict[str, Available]]:
    """Return every board with published results: version IRI -> type name -> what it has.

    One pass over the published experiments of the index, once per store generation.
    """

    def _collect() -> dict[str, dict[str, Available]]:
        found: dict[tuple[str, str], tuple[set[str], set[str], Counter[str]]] = {}
        for entry in svc.experiments.newest_first(svc.visibility().can_see):
            for scores in entry.scores:
                systems, owners, profiles = found.setdefault(
                    (scores.version, type_name(NamedNode(scores.type))), (set(), set(), Counter())
                )
                systems.add(scores.system)
                owners.add(entry.iri)
                profiles[profile_name(scores)] += 1
        out: dict[str, dict[str, Available]] = {}
        for (version, kind), (systems, owners, profiles) in sorted(found.items()):
            dataset = dataset_of(svc.base, version)
            if dataset is not None:
                ranked = tuple(sorted(profiles.items(), key=lambda kv: profile_order(kv[0])))
                out.setdefault(version, {})[kind] = Available(
                    dataset, frozenset(systems), len(owners), ranked
                )
        return out

    return svc.remember("leaderboard-available", _collect)


def board_measures(svc: Services, version: str, kind: NamedNode) -> tuple[str, ...]:
    """Return the measures some published task on the board has a value for (registry order)."""

    def _collect() -> tuple[str, ...]:
        present = np.zeros(len(MEASURES), dtype=bool)
        for _entry, scores in svc.experiments.board(version, kind.value, svc.visibility().can_see):
            present |= np.isfinite(np.frombuffer(scores.values, dtype=np.float64))
        return tuple(m for m, here in zip(MEASURES, present, strict=True) if here)

    return svc.remember(f"board-measures {version} {kind}", _collect)


def _profile(svc: Services, kind: str, available: Available | None) -> str:
    """Return the requested profile, else the default one if the board has it, else the
    profile that scored most of the board's tasks."""
    default = BIOASQ_PROFILE if kind in BIOASQ_TYPES else svc.config.evaluation.default_profile
    profile = request.args.get("profile", "").strip()
    if profile and profile != ANY and profile not in PROFILE_TERMS:
        known = ", ".join((ANY, *PROFILE_TERMS))
        raise Problem(400, f"Unknown profile {profile[:40]!r}; expected one of: {known}")
    if profile:
        return profile
    having = [p for p, _ in available.profiles] if available is not None else []
    return default if default in having or not having else having[0]


def _ranking(svc: Services, kind: str, profile: str) -> tuple[str, str]:
    default = BIOASQ_PROFILE if kind in BIOASQ_TYPES else svc.config.evaluation.default_profile
    chosen = request.args.get("measure", "").strip() or None
    try:
        return ranking_measures(default if profile == ANY else profile, kind, chosen)
    except KeyError:
        raise Problem(
            400,
            f"Unknown measure {(chosen or '')[:40]!r}; expected one of: {', '.join(MEASURES)}",
        ) from None


@dataclass(frozen=True, slots=True)
class Board:
    """A leaderboard as loaded for one request: its parameters, ranking and query."""

    version: str
    kind: str
    profile: str
    ranking: tuple[str, str]
    ranked: Ranked[Entry]
    query: str
    page: Page[tuple[int, Entry]]
    available: dict[str, dict[str, Available]]
    measures: tuple[str, ...]


def _ranked(
    svc: Services, version: NamedNode, term: NamedNode, ranking: tuple[str, str], profile: str
) -> Ranked[Entry]:
    def _rank() -> Ranked[Entry]:
        found = board_rows(svc, version, term, ranking)
        rows = [r for r in found if profile == ANY or r["profile"] == profile]
        return board(best_per_system(rows, ranking))

    # Published results change only with the store: ranked once per generation and board.
    key = f"leaderboard {version} {term} {' '.join(ranking)} {profile}"
    return svc.remember(key, _rank)


def _load_board(reader: Reader) -> Board:
    svc = reader.svc
    version = request.args.get("version", "").strip()
    kind, term = _type_term(svc, request.args.get("type", "").strip() or "QA")
    boards = available_boards(svc)
    profile = _profile(svc, kind, boards.get(version, {}).get(kind))
    ranking = _ranking(svc, kind, profile)
    ranked: Ranked[Entry] = board(())
    text = ""
    measures: tuple[str, ...] = ()
    if version:
        try:
            version_term = NamedNode(version)
        except ValueError as exc:
            raise Problem(400, "Pass ?version= as the absolute IRI of a dataset version.") from exc
        text = board_query(version_term, term, ranking)  # what the page links to
        ranked = _ranked(svc, version_term, term, ranking, profile)
        measures = board_measures(svc, version, term)
    size = svc.config.server.page_size
    page = paginate(ranked.ranked, len(ranked.ranked), page_number(), size)
    return Board(version, kind, profile, ranking, ranked, text, page, boards, measures)


def _board_csv(_reader: Reader, found: Board) -> str:
    return to_csv(board_table(found.ranked, found.ranking))


def _board_json(_reader: Reader, found: Board) -> str:
    ranking = found.ranking
    doc = {
        "version": found.version,
        "type": found.kind,
        "profile": found.profile,
        "ranking": list(ranking),
        "entries": [entry_json(e, n, ranking) for n, e in found.ranked.ranked],
        "sanity_checks": [entry_json(e, None, ranking) for e in found.ranked.sanity],
    }
    return json.dumps(doc, ensure_ascii=False)


def _board_html(reader: Reader, found: Board) -> str:
    svc, page, ranking, text = reader.svc, found.page, found.ranking, found.query
    # the HTML shows one page of the ranked systems (the sanity checks on every page)
    links = page.neighbours(reader.stem)
    label = column(ranking[0]).label
    chart = bar_chart(
        f"Best published {label} per system",
        [(e.label, e.first) for _, e in page.rows if e.first is not None],
    )
    default = svc.config.evaluation.default_profile
    return render_template(
        "leaderboard.html",
        title="Leaderboard",
        version=found.version,
        kind=found.kind,
        profile=found.profile,
        measure=ranking[0],
        measures=[m for m in MEASURES if m in found.measures or m in ranking],
        boards=found.available,
        undefined_note=undefined_note(found),
        chosen=found.available.get(found.version, {}),
        headline=headline(default if found.profile == ANY else found.profile, found.kind)[0],
        types=EXPERIMENT_TYPES,
        profiles=_profiles_offered(found),
        columns=(column(ranking[0]), column(ranking[1])),
        entries=page.rows,
        sanity=list(found.ranked.sanity),
        page=page,
        prev_url=links.get("prev"),
        next_url=links.get("next"),
        chart=chart,
        format_value=format_value,
        ranking=ranking,
        query_href=query_link(text) if text else None,
        alternates=[(query_link(text, f), m, label) for f, m, label in DATA_FORMS] if text else [],
    )


def _board_links(reader: Reader, found: Board) -> list[str]:
    return page_links(found.page, reader.stem) if reader.rep == HTML else []  # type: ignore[arg-type]


LEADERBOARD: Resource[Board] = Resource(
    formats=BOARD_FORMATS,
    load=_load_board,
    html=_board_html,
    extra=((CSV, _board_csv), (JSON_REPORT, _board_json)),
    links=_board_links,
    documents=False,
    public=True,
)


@bp.route("/leaderboard")
def leaderboard() -> Response:
    """Best published result per system for one dataset version and experiment type.

    Ranked by the profile's headline measure (``?measure=`` switches); sanity systems are
    listed apart. ``Accept: text/csv`` (or ``?format=csv``) gives the board as CSV.
    """
    return serve(LEADERBOARD, "/leaderboard")


# Experiment types scored on the markings of the system's SPARQL query, not its answers.
_QUERY_TYPES = frozenset({"AIT2KB", "C2KB", "P2KB", "RE2KB"})


def undefined_note(found: Board) -> str:
    """Return what the reader must know about values that are undefined or measure queries."""
    notes = []
    missing = sum(1 for _, e in found.ranked.ranked if e.first is None)
    if missing:
        notes.append(
            f"{MEASURES[found.ranking[0]].label} is undefined for {missing} system(s) on this "
            "board (for example Macro F1 QALD when the mean precision and recall are both 0): "
            "they are listed last, unranked by it."
        )
    if found.kind in _QUERY_TYPES:
        notes.append(
            f"{found.kind} compares the SPARQL query a system gave with the gold query: a "
            "system whose answers carry no queries (an answers file of answers only) scores 0 "
            "here, which says that it was not measured, not that its queries were wrong."
        )
    return " ".join(notes)


def _profiles_offered(found: Board) -> list[str]:
    """Return the profiles the board's tasks were scored under (and ``any``)."""
    available = found.available.get(found.version, {}).get(found.kind)
    having = [p for p, _ in available.profiles] if available is not None else list(PROFILE_TERMS)
    return [ANY, *having] if len(having) > 1 or found.profile == ANY else having
