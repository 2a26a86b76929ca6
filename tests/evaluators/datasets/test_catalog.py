"""The catalog's earlier releases of QALD files: pinned to the commit that served them, with
checksums, the dates they were current and the dates GERBIL QA served them."""

from __future__ import annotations

from datetime import date
from itertools import pairwise
from pathlib import Path

import pytest

from evaluators.datasets.catalog import catalog, fetch, releases, served_on
from evaluators.errors import FetchError
from store.triplestore import TripleStore

BASE = "https://example.org/qb"


def _range(text: str | None) -> tuple[date, date | None]:
    start, _, end = (text or "").partition("/")
    return date.fromisoformat(start), date.fromisoformat(end) if end else None


def test_every_earlier_release_is_pinned_checked_and_dated() -> None:
    earlier = [e for e in catalog().values() if e.release_of]
    assert len(earlier) == 8
    for item in earlier:
        today = catalog()[item.release_of or ""]
        assert today.release_of is None and today.format is item.format, item.name
        assert item.sha256 and item.size and item.verified and item.published, item.name
        commit = item.verified.rpartition("@")[2]
        assert len(commit) == 40 and f"/{commit}/" in item.url, item.name
        assert f"@{commit[:12]}/" in item.mirror_path, item.name
        start, end = _range(item.served)
        assert end is not None and start < end, item.name
        if item.gerbil:
            gerbil_start, _ = _range(item.gerbil)
            assert gerbil_start >= date(2017, 6, 30), item.name  # GERBIL QA's QALD datasets
    # the releases of one file follow each other without overlapping; today's is open-ended
    files = {e.release_of for e in earlier}
    assert len(files) == 5
    for name in files:
        ranges = [_range(e.served) for e in releases(name or "")]
        assert ranges[-1][1] is None
        for (_, end), (start, _) in pairwise(ranges):
            assert end is not None and end <= start, name


def test_qald8_test_has_the_47_and_the_41_question_releases() -> None:
    first, current = releases("qald-8-test-multilingual")
    assert first.name == "qald-8-test-multilingual-47" and current.release_of is None
    # October 2017 on GitHub, until the challenge file was fixed on 2017-11-07
    assert (first.served, current.served) == ("2017-10-07/2017-11-07", "2017-11-07/")
    # GERBIL QA bundled it until its qa.datasets dependency moved on (April 2018)
    assert first.gerbil == "2017-10-18/2018-04-16" and current.gerbil == "2018-04-16/"
    assert served_on("qald-8-test-multilingual", "2017-10-22") is first
    assert served_on("qald-8-test-multilingual-47", "2018-07-15") is current
    assert served_on("qald-8-test-multilingual", "2017-01-01") is None


def test_gerbil_still_serves_the_qald9_files_of_2018() -> None:
    names = [e.name for e in releases("qald-9-test-multilingual")]
    assert names == [
        "qald-9-test-multilingual-2018", "qald-9-test-multilingual-2019",
        "qald-9-test-multilingual-2020", "qald-9-test-multilingual-2021",
        "qald-9-test-multilingual",
    ]  # fmt: skip
    assert catalog()["qald-9-test-multilingual-2018"].gerbil == "2019-01-03/"
    assert catalog()["qald-9-train-multilingual-2018"].gerbil == "2018-08-20/"
    assert catalog()["qald-9-test-multilingual"].gerbil is None


def test_a_release_is_verified_against_its_own_checksum(tmp_path: Path, shared_data: Path) -> None:
    # a mirror laid out like the catalog, holding today's 41-question file in both places
    current = shared_data / "qald/ag-sc_QALD/8/data/qald-8-test-multilingual.json"
    mirror = tmp_path / "mirror"
    for name in ("qald-8-test-multilingual", "qald-8-test-multilingual-47"):
        target = mirror / catalog()[name].mirror_path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(current.read_bytes())
    store = TripleStore.open(tmp_path / "store")
    try:
        loaded = fetch(store, BASE, "qald-8-test-multilingual", mirror=str(mirror))
        assert (loaded.info.name, loaded.info.questions) == ("qald-8-test-multilingual", 41)
        before = len(store)
        with pytest.raises(FetchError, match=r"checksum mismatch.*c000dc1d"):
            fetch(store, BASE, "qald-8-test-multilingual-47", mirror=str(mirror))
        assert len(store) == before
    finally:
        store.close()


def test_mirage_entries_share_one_checked_file_and_state_their_licences() -> None:
    entries = [e for e in catalog().values() if e.format.value == "mirage"]
    assert sorted(e.part or "" for e in entries) == [
        "", "bioasq", "medmcqa", "medqa", "mmlu", "pubmedqa",
    ]  # fmt: skip
    assert len({(e.url, e.sha256, e.size) for e in entries}) == 1
    assert all(e.license and e.verified and "3490d7b5" in e.url for e in entries)


def test_a_mirage_part_loads_alone(tmp_path: Path) -> None:
    from tests import TEST_DATA

    mirror = tmp_path / "mirror"
    target = mirror / catalog()["mirage-medqa"].mirror_path
    target.parent.mkdir(parents=True)
    target.write_bytes((TEST_DATA / "mirage" / "benchmark-excerpt.json").read_bytes())
    store = TripleStore.open(tmp_path / "store")
    try:
        with pytest.raises(FetchError, match="checksum mismatch"):
            fetch(store, BASE, "mirage-medqa", mirror=str(mirror))
        assert len(store) == 0
        loaded = fetch(store, BASE, "mirage-medqa", mirror=str(mirror), verify=False)
        assert (loaded.info.name, loaded.info.questions) == ("mirage-medqa", 3)
        licence = store.select(
            "SELECT ?l WHERE { GRAPH ?g { ?v <http://purl.org/dc/terms/license> ?l } }"
        )
        assert [str(r["l"].value) for r in licence] == ["https://spdx.org/licenses/MIT"]
    finally:
        store.close()


def test_sciqa_entries_load_questions_with_their_gold(tmp_path: Path) -> None:
    from tests import TEST_DATA

    sciqa = TEST_DATA / "sciqa"
    entries = [e for e in catalog().values() if e.format.value == "sciqa"]
    assert sorted(e.name for e in entries) == [
        "sciqa-test", "sciqa-test-orkg-2025", "sciqa-train", "sciqa-valid",
    ]  # fmt: skip
    assert all(e.sha256 and e.gold_results and e.gold_results.sha256 and e.license
               for e in entries)  # fmt: skip
    mirror = tmp_path / "mirror"
    for name, gold in (
        ("sciqa-test", "answers.json"),
        ("sciqa-test-orkg-2025", "firesparql-run.csv"),
    ):
        item = catalog()[name]
        assert item.gold_results is not None
        for path, source in (
            (item.mirror_path, "questions.json"),
            (item.gold_results.mirror_path, gold),
        ):
            target = mirror / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes((sciqa / source).read_bytes())
    store = TripleStore.open(tmp_path / "store")
    try:
        with pytest.raises(FetchError, match="checksum mismatch"):
            fetch(store, BASE, "sciqa-test", mirror=str(mirror))
        assert len(store) == 0
        for name in ("sciqa-test", "sciqa-test-orkg-2025"):
            loaded = fetch(store, BASE, name, mirror=str(mirror), verify=False)
            assert (loaded.info.name, loaded.info.questions) == (name, 7)
        statuses = store.select(
            "SELECT ?s (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?q "
            "<https://w3id.org/qabench/vocab#executionStatus> ?s } } GROUP BY ?s ORDER BY ?s"
        )
        # SciQA's gold: 7 tables; the run's: 5 tables, a null, an error
        assert [(str(r["s"].value), int(r["n"].value)) for r in statuses] == [
            ("ERROR", 1), ("NULL", 1), ("SUCCESS", 12),
        ]  # fmt: skip
    finally:
        store.close()
