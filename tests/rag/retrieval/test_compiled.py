"""Compiled postings: the numpy search of OR-ed words returns exactly Whoosh's hits and scores."""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from rag.corpus.article import Article, Deletion
from rag.corpus.reader import read_corpus
from rag.retrieval import compiled
from rag.retrieval.index import IndexPool, LiteratureIndex, bag_of_words, open_index
from rag.retrieval.retrievers import question_query

CDR = "pubmed/cryptoradon_biomedRelExt/CDR_Data/CDR.Corpus.v010516"
# PMIDs withdrawn after the build (in an early segment, so a later commit marks them deleted)
WITHDRAWN = ("21645374", "16418930", "9488747")


@pytest.fixture(scope="module")
def real_index(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """PubMedQA + CDR abstracts in several commits: replacements and deletions included."""
    directory = tmp_path_factory.mktemp("compiled") / "index"
    with open_index(directory, create=True) as index:
        index.add(read_corpus(shared_data / "pubmed/pubmedqa_pubmedqa/data/ori_pqal.json"))
        index.add(read_corpus(shared_data / CDR / "CDR_TestSet.PubTator.titles_abstracts.tsv"))
        # the training file holds the development set too; written by two processes
        report = index.add(
            read_corpus(shared_data / CDR / "CDR_TrainingSet.PubTator.titles_abstracts.tsv"),
            procs=2,
        )
        assert report.replaced == 0 and report.added == 1000
        report = index.add(
            read_corpus(shared_data / CDR / "CDR_DevelopmentSet.PubTator.titles_abstracts.tsv")
        )
        assert report.replaced == 500
        assert index.add(Deletion(p) for p in WITHDRAWN).deleted == len(WITHDRAWN)
    yield directory


def bioasq_queries(shared_data: Path) -> list[str]:
    source = next((shared_data / "bioasq").rglob("BioASQ-trainingDataset2b.json"))
    questions = json.loads(source.read_text("utf-8"))["questions"]
    return [q for q in (question_query(item["body"]) for item in questions) if q]


@pytest.mark.slow
def test_every_bioasq_question_ranks_as_in_whoosh(real_index: Path, shared_data: Path) -> None:
    queries = bioasq_queries(shared_data)
    assert len(queries) >= 300
    with open_index(real_index) as index:
        info = index.info()
        assert info.segments >= 2 and info.compiled_segments == info.segments
        compared = found = 0
        for query in queries:
            fast = index.search(query, 50)
            slow = index.search(query, 50, compiled_postings=False)
            assert [h.article.pmid for h in fast] == [h.article.pmid for h in slow], query
            for a, b in zip(fast, slow, strict=True):
                assert a.score == pytest.approx(b.score, rel=1e-9)
                assert a.article == b.article
            compared += 1
            found += len(fast)
            assert not {h.article.pmid for h in fast} & set(WITHDRAWN)
    assert compared == len(queries) and found > 100 * len(queries) // 10


def test_withdrawn_citations_are_not_found_by_either_path(real_index: Path) -> None:
    with open_index(real_index) as index:
        for pmid in WITHDRAWN:
            assert index.document(pmid) is None
        hits = index.search("naloxone clonidine hypertension", 2500)
        assert len(hits) > 10 and not {h.article.pmid for h in hits} & set(WITHDRAWN)


def test_a_missing_copy_falls_back_to_whoosh_and_compile_restores_it(
    real_index: Path, tmp_path: Path
) -> None:
    directory = tmp_path / "index"
    shutil.copytree(real_index, directory)
    copies = sorted((directory / compiled.COMPILED).iterdir())
    shutil.rmtree(copies[0])
    query = "famotidine delirium elderly patients"
    with open_index(directory) as index:
        info = index.info()
        assert info.compiled_segments == info.segments - 1
        assert (
            compiled.search(directory, index._current_searcher().reader(), ["x"], 5, b=0.75, k1=1.2)
            is None
        )
        slow = [h.article.pmid for h in index.search(query, 20)]
        assert slow == [h.article.pmid for h in index.search(query, 20, compiled_postings=False)]
        assert index.compile() == 1
        assert index.info().compiled_segments == info.segments
        assert [h.article.pmid for h in index.search(query, 20)] == slow


def test_merged_segments_lose_their_copies(rag_writable_index: LiteratureIndex) -> None:
    folder = rag_writable_index.directory / compiled.COMPILED
    seen: set[str] = set()
    for number in range(12):  # single-process commits merge small segments now and then
        rag_writable_index.add([Article(pmid=f"77{number}", title="merge", abstract="segment")])
        seen |= {p.name for p in folder.iterdir()}
    info = rag_writable_index.info()
    after = {p.name for p in folder.iterdir()}
    assert info.compiled_segments == info.segments == len(after)
    assert seen - after, "no segment was merged away"
    assert len(rag_writable_index.search("merge", 50)) == 12


@pytest.mark.parametrize(
    ("query", "terms"),
    [
        ("famotidine delirium", [("famotidin", 1.0), ("delirium", 1.0)]),
        ("delirium", [("delirium", 1.0)]),
        ("abstract:delirium", [("delirium", 1.0)]),  # ``abstract`` is an alias of the text field
        ('"heart attack"', None),
        ("title:heart", None),
        ("heart^2 lung^0.35", [("heart", 2.0), ("lung", 0.35)]),  # boosted words (feedback)
        ("cardio*", None),
        ("famotadine~", None),
        ("heart AND lung", None),
        ("heart NOT lung", None),
        ("year:1996", None),
    ],
)
def test_only_queries_of_ored_words_are_compiled(
    rag_index: LiteratureIndex, query: str, terms: list[tuple[str, float]] | None
) -> None:
    parsed = rag_index._parser.parse(query).normalize()
    assert bag_of_words(parsed) == terms


def test_structured_queries_give_the_same_hits_on_both_paths(rag_index: LiteratureIndex) -> None:
    queries = ("heart", "aspirin clopidogrel infarction", "heart^2 lung^0.3", '"heart attack"')
    for query in queries:
        fast = rag_index.search(query, 50)
        slow = rag_index.search(query, 50, compiled_postings=False)
        assert [(h.article.pmid, round(h.score, 9)) for h in fast] == [
            (h.article.pmid, round(h.score, 9)) for h in slow
        ]


def test_pmid_membership_reads_canonical_numbers_and_other_ids() -> None:
    import numpy as np

    known = compiled.PmidSet(np.array([7, 123, 4000], dtype=np.int64), {"0123", "http://x/A"})
    assert "123" in known and "7" in known and "4000" in known
    assert "0123" in known and "http://x/A" in known
    assert "12" not in known and "00123" not in known and "http://x/B" not in known
    assert 123 not in known


def test_a_build_replaces_and_deletes_by_the_compiled_pmids(
    rag_writable_index: LiteratureIndex,
) -> None:
    info = rag_writable_index.info()
    assert info.compiled_segments == info.segments
    iri = "http://dbpedia.org/resource/Aspirin"
    report = rag_writable_index.add(
        [
            Article(pmid="1000001", title="Replaced", abstract="replaced text"),
            Article(pmid="42", title="New", abstract="new text"),
            Article(pmid=iri, title="Aspirin", abstract="an IRI as id"),
            Deletion("1000002"),
            Deletion("31337"),  # never indexed
        ]
    )
    assert (report.added, report.replaced, report.deleted) == (2, 1, 1)
    again = rag_writable_index.add([Article(pmid=iri, title="Aspirin", abstract="again")])
    assert (again.added, again.replaced) == (0, 1)
    assert rag_writable_index.document("1000002") is None
    assert rag_writable_index.document("1000001") == Article(
        pmid="1000001", title="Replaced", abstract="replaced text"
    )


def test_a_kept_searcher_sees_later_commits(rag_writable_index: LiteratureIndex) -> None:
    assert not rag_writable_index.search("zebrafishlike", 5)
    rag_writable_index.add([Article(pmid="55", title="zebrafishlike", abstract="a new word")])
    assert [h.article.pmid for h in rag_writable_index.search("zebrafishlike", 5)] == ["55"]


def test_the_pool_lends_each_thread_its_own_index(rag_index_dir: Path) -> None:
    pool = IndexPool(rag_index_dir, keep=2)
    with pool.checkout() as first:
        pass
    with pool.checkout() as again:
        assert again is first  # kept open between runs
    held: list[LiteratureIndex] = []
    barrier = threading.Barrier(3)

    def borrow() -> None:
        with pool.checkout() as index:
            held.append(index)
            barrier.wait(timeout=30)
            assert index.search("heart", 5)

    threads = [threading.Thread(target=borrow) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(index) for index in held}) == 3
    assert len(pool._idle) == 2  # no more than ``keep`` stay open
    pool.close()
    assert not pool._idle


def test_prune_keeps_copies_whose_segment_files_remain(
    rag_writable_index: LiteratureIndex,
) -> None:
    directory = rag_writable_index.directory
    root = directory / compiled.COMPILED
    live = {p.name for p in root.iterdir()}
    assert live
    (root / "MAIN_gone").mkdir()
    (root / ".MAIN_gone.partial-x1").mkdir()
    # a caller with an older view (no segments at all) removes only what has no files
    assert compiled.prune(directory, []) == 2
    assert {p.name for p in root.iterdir()} == live


# the kinds of multi-term parts, with and without fields, negation and boosts
MULTI_TERM_QUERIES = (
    "cardio*",
    "hepat* AND liver",
    "title:nephro* OR kidney",
    "te?t*",
    "*toxic",
    "cisplatin~1",
    "nephrotox~1/5",
    "abstract:(seiz* OR convuls*) NOT rat*",
    "title:[cocaine TO cyclosporin]",
    "aspirin^2 infarct*^0.5",
    '"heart failure" OR cardiomyopath*',
)


def test_expansions_pinned_once_rank_as_whoosh_expanding_them_per_segment(
    real_index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rag.retrieval import index as index_module

    with open_index(real_index) as index:
        assert index.info().segments >= 2
        pinned = {q: index.search(q, 50) for q in MULTI_TERM_QUERIES}
        monkeypatch.setattr(index_module, "_expand_within_bounds", lambda parsed, *_: parsed)
        compared = 0
        for query, hits in pinned.items():
            plain = index.search(query, 50)
            assert [h.article.pmid for h in hits] == [h.article.pmid for h in plain], query
            assert [h.score for h in hits] == pytest.approx([h.score for h in plain], abs=1e-9)
            compared += len(hits) > 0
    assert compared == len(MULTI_TERM_QUERIES)  # every query found something to compare
