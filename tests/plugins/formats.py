"""Fixtures for the benchmark file parser tests (``tests/test_evaluators_formats*.py``).

``formats_data`` points at the hand-written edge-case files in ``tests/data/formats``;
``formats_real_files`` lists the public benchmark files the acceptance test parses, grouped by
how their question count is computed independently of our parsers.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from evaluators.formats import parse_bytes
from evaluators.model import Dataset
from tests import TEST_DATA

FORMATS_DATA = TEST_DATA / "formats"


@pytest.fixture(scope="session")
def formats_data() -> Path:
    """Return the directory of hand-written format fixtures."""
    return FORMATS_DATA


@pytest.fixture
def formats_parse(formats_data: Path) -> Callable[[str], Dataset]:
    """Return a function parsing one fixture file by name (format detected)."""

    def parse(name: str) -> Dataset:
        path = formats_data / name
        return parse_bytes(path.read_bytes(), source=name)

    return parse


def qald_json(*questions: dict[str, object], **top: object) -> bytes:
    """Return a QALD JSON document holding ``questions`` (plus top-level fields)."""
    return json.dumps({"questions": list(questions), **top}).encode("utf-8")


@dataclass(frozen=True, slots=True)
class RealFiles:
    """Public benchmark files, by area."""

    qald: tuple[Path, ...]
    bioasq: tuple[Path, ...]
    systems_json: tuple[Path, ...]
    systems_xml: tuple[Path, ...]


@pytest.fixture(scope="session")
def formats_real_files(shared_data: Path) -> RealFiles:
    """Return the QALD, BioASQ and system answer files under the shared data directory."""

    def glob(area: str, *suffixes: str) -> tuple[Path, ...]:
        return tuple(
            sorted(
                p
                for p in (shared_data / area).rglob("*")
                if p.is_file() and (not suffixes or p.suffix in suffixes)
            )
        )

    return RealFiles(
        qald=glob("qald", ".json", ".xml"),
        bioasq=glob("bioasq"),
        systems_json=glob("systems", ".json"),
        systems_xml=glob("systems", ".xml"),
    )
