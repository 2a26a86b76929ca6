"""Leaderboards: each system's best task on one dataset version and type, ranked.

Pure: rows of task values in (the experiment index's aggregate values, or query rows), ranked
entries and their table out. Each system is represented by its best task under the two ranking
measures (the deciding one and the tie-breaker, ``evaluators.reports.headline``); systems are
ranked best first with shared ranks for ties; sanity systems (``gold``) are listed apart and
never ranked. The board's table is what the CSV form of a leaderboard holds.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from evaluators.reports.headline import Ranked, best_of, is_sanity, rank
from evaluators.reports.render import Cell, Estimate, Table
from evaluators.results import INTERVALS, MEASURES, MeasureValue


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
    sanity: bool = False
    low: float | None = None  # the deciding measure's stored 95% interval (None: none)
    high: float | None = None


def best_per_system(rows: Iterable[dict[str, str]], ranking: tuple[str, str]) -> list[Entry]:
    """Return each system's best task by the two ranking measures (unordered).

    Args:
        rows: query rows with ``task``, ``system``, ``measure`` (an id) and ``value``, plus
            optional ``label``, ``experiment``, ``created``, ``language``, ``profile``, and the
            system configuration's ``kind`` and ``builtin`` (sanity systems are marked); rows
            of the bounds of the deciding measure's interval (``INTERVALS``) give its interval.
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

    def pair(task: str) -> tuple[float | None, float | None]:
        found = values[task]
        return found.get(ranking[0]), found.get(ranking[1])

    entries = []
    for system, owned in by_system.items():
        best = best_of(sorted(owned), pair)
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
                is_sanity(row.get("kind"), row.get("builtin")),
                *(found.get(b) for b in INTERVALS.get(ranking[0], ("", ""))),
            )
        )
    return entries


def board(entries: Iterable[Entry]) -> Ranked[Entry]:
    """Rank entries best first (ties share a rank); sanity systems apart, unranked."""
    return rank(
        entries,
        values=lambda e: (e.first, e.second),
        label=lambda e: e.label,
        sanity=lambda e: e.sanity,
    )


def board_table(ranked: Ranked[Entry], ranking: tuple[str, str]) -> Table:
    """Return the board as a table (its CSV form): ranked systems, then sanity checks."""
    rows: list[tuple[Cell, ...]] = []
    listed = [(str(n), e) for n, e in ranked.ranked] + [("", e) for e in ranked.sanity]
    for position, e in listed:
        rows.append(
            (
                position,
                e.label,
                "yes" if e.sanity else "no",
                Estimate(_value(ranking[0], e.first), e.low, e.high),
                _value(ranking[1], e.second),
                e.language,
                e.profile,
                e.experiment,
                e.task,
                str(e.tasks),
            )
        )
    headings = (
        "Rank", "System", "Sanity check", MEASURES[ranking[0]].label,
        MEASURES[ranking[1]].label, "Language", "Profile", "Experiment", "Task", "Tasks",
    )  # fmt: skip
    return Table("Leaderboard", headings, tuple(rows))


def entry_json(e: Entry, position: int | None, ranking: tuple[str, str]) -> dict[str, object]:
    """Return one entry as the JSON form of a leaderboard shows it (``rank`` None: sanity)."""
    return {
        "rank": position,
        "system": e.system,
        "label": e.label,
        ranking[0]: e.first,
        f"{ranking[0]}_interval": [e.low, e.high] if e.low is not None else None,
        ranking[1]: e.second,
        "task": e.task,
        "experiment": e.experiment,
        "language": e.language,
        "profile": e.profile,
        "tasks": e.tasks,
    }


def _value(measure: str, value: float | None) -> MeasureValue:
    # A ranking value the task has no value for was not reported.
    return MeasureValue(measure, value, None if value is not None else "not reported")
