"""The Whoosh literature index: building, describing, searching and atomic incremental adds."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from rag.corpus.article import Article
from rag.corpus.reader import read_corpus
from rag.errors import CorpusFormatError, IndexMissingError, QuerySyntaxError
from rag.retrieval.index import LiteratureIndex, open_index
from tests.disk import open_under
from tests.plugins.rag import CORPUS_SIZE, HANDWRITTEN, article_json


def pmids(index: LiteratureIndex, query: str, k: int = 50) -> list[str]:
    return [hit.article.pmid for hit in index.search(query, k)]


def test_info_reports_count_fields_size_and_age(rag_index: LiteratureIndex) -> None:
    info = rag_index.info()
    assert info.documents == CORPUS_SIZE
    assert set(info.fields) == {"pmid", "title", "abstract", "text", "mesh", "year"}
    assert info.size_bytes > 10_000
    assert info.last_modified is not None
    assert time.time() - info.last_modified.timestamp() < 3600


def test_opening_a_missing_index_says_how_to_build_one(tmp_path: Path) -> None:
    with pytest.raises(IndexMissingError, match="qabench index build"):
        open_index(tmp_path / "nothing")


def test_stored_fields_round_trip(rag_index: LiteratureIndex) -> None:
    for article in HANDWRITTEN:
        assert rag_index.document(article.pmid) == article
    assert rag_index.document("999") is None


SEARCHES = [
    # (query, PMIDs that must be found, PMIDs that must not be found)
    ('"myocardial infarction"', {"1000001"}, {"1000002", "1000003"}),
    ('"heart attack"', {"1000002"}, {"1000001", "1000003"}),
    ('"attack heart"', set(), {"1000002"}),
    ("aspirin AND clopidogrel", {"1000002"}, {"1000001"}),
    ("aspirin OR famotidine", {"1000001", "1000002", "1000005"}, {"1000003"}),
    ("heart NOT lung", {"1000002"}, {"1000003"}),
    ("heart AND NOT lung", {"1000002"}, {"1000003"}),
    ("+heart -lung", {"1000002"}, {"1000003"}),
    ("+aspirin infarction", {"1000001", "1000002"}, {"1000003"}),
    ("title:heart", {"1000002", "1000003"}, {"1000001"}),
    ("abstract:heart", {"1000002", "1000003"}, set()),
    ("title:aspirin", {"1000001"}, {"1000002"}),
    ("mesh:famotidine", {"1000005"}, {"1000001"}),
    ('mesh:"rural health"', {"1000002"}, {"1000001"}),
    ("pmid:1000006", {"1000006"}, {"1000001"}),
    ("year:[2000 TO 2006] AND aspirin", {"1000001", "1000002"}, set()),
    ("year:1996", {"1000005"}, {"1000001"}),
    ("cardio*", {"1000006"}, {"1000003"}),
    ("cardi*", {"1000003", "1000006"}, {"1000001"}),
    ("cardi?myopath*", {"1000006"}, set()),
    ("famotadine~", {"1000005"}, set()),
    ("famotadine", set(), {"1000005"}),
    ("delirum~2", {"1000005"}, set()),
    ("H2-receptor", {"1000002"}, set()),
    ("café macules", {"1000004"}, set()),
    ("β-catenin", {"1000004"}, set()),
    ('"hepatitis B"', {"1000007"}, set()),
]


@pytest.mark.parametrize(("query", "found", "absent"), SEARCHES)
def test_query_syntax_finds_the_expected_articles(
    rag_index: LiteratureIndex, query: str, found: set[str], absent: set[str]
) -> None:
    result = set(pmids(rag_index, query))
    assert found <= result
    assert not absent & result
    if not found:
        assert not result & {a.pmid for a in HANDWRITTEN if a.pmid in absent}


def test_boost_changes_the_order(rag_index: LiteratureIndex) -> None:
    assert pmids(rag_index, "famotidine^5 aspirin")[0] == "1000005"
    assert pmids(rag_index, "famotidine aspirin^5")[0] in {"1000001", "1000002"}


def test_scores_are_bm25_ordered_and_limited(rag_index: LiteratureIndex) -> None:
    hits = rag_index.search("aspirin OR heart OR cells OR pregnancy", 5)
    assert len(hits) == 5
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(s > 0 for s in scores)


def test_search_is_deterministic(rag_index: LiteratureIndex) -> None:
    first = rag_index.search("the retinal cells improved during pregnancy", 50)
    assert len(first) == 50
    assert rag_index.search("the retinal cells improved during pregnancy", 50) == first


@pytest.mark.parametrize(
    ("query", "position"),
    [("(heart", 0), ("year:abc", 5), ("heart AND", 6), ("titel:heart", 0)],
)
def test_malformed_queries_raise_instead_of_returning_nothing(
    rag_index: LiteratureIndex, query: str, position: int
) -> None:
    with pytest.raises(QuerySyntaxError) as caught:
        rag_index.search(query, 10)
    assert caught.value.position == position


def test_incremental_add_inserts_and_replaces_by_pmid(rag_writable_index: LiteratureIndex) -> None:
    new = Article("3000001", "Zebrafish fin regeneration.", "Fins regrew in zebrafish.")
    changed = Article("1000005", "Famotidine revisited.", "Ranitidine was the comparator.")
    report = rag_writable_index.add([new, changed, new])
    assert (report.added, report.replaced, report.duplicates) == (1, 1, 1)
    assert report.documents == CORPUS_SIZE + 1
    assert pmids(rag_writable_index, "zebrafish") == ["3000001"]
    assert pmids(rag_writable_index, "ranitidine") == ["1000005"]
    assert "1000005" not in pmids(rag_writable_index, "delirium")
    assert rag_writable_index.info().documents == CORPUS_SIZE + 1


def test_failed_add_leaves_the_index_unchanged(
    rag_writable_index: LiteratureIndex, tmp_path: Path
) -> None:
    before_count = rag_writable_index.info().documents
    before_hits = rag_writable_index.search("famotidine OR delirium OR heart", 50)
    corpus = tmp_path / "broken.jsonl"
    good = [
        Article("3000001", "Zebrafish fin regeneration.", "Fins regrew in zebrafish."),
        Article("1000005", "Famotidine revisited.", "Ranitidine was the comparator."),
    ]
    lines = [article_json(a) for a in good] + ['{"pmid": "3000002", "title": "no abstract"}']
    corpus.write_text("\n".join(lines) + "\n", "utf-8")
    with pytest.raises(CorpusFormatError) as caught:
        rag_writable_index.add(read_corpus(corpus))
    assert caught.value.line == 3
    assert rag_writable_index.info().documents == before_count
    assert rag_writable_index.search("famotidine OR delirium OR heart", 50) == before_hits
    assert pmids(rag_writable_index, "zebrafish OR ranitidine") == []
    # the index is still writable afterwards (the failed writer released its lock)
    assert rag_writable_index.add(good[:1]).documents == before_count + 1


def test_a_fresh_index_can_be_built_from_a_corpus_file(
    rag_corpus_file: Path, tmp_path: Path
) -> None:
    with open_index(tmp_path / "ix", create=True) as index:
        report = index.add(read_corpus(rag_corpus_file))
        assert (report.added, report.replaced, report.documents) == (CORPUS_SIZE, 0, CORPUS_SIZE)
        assert pmids(index, '"heart attack"') == ["1000002"]
    with open_index(tmp_path / "ix", create=True) as again:
        report = again.add(read_corpus(rag_corpus_file))
        assert (report.added, report.replaced, report.documents) == (0, CORPUS_SIZE, CORPUS_SIZE)


def test_progress_bar_goes_to_stderr_only_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    articles = [Article(str(n), f"Title {n}", "Text.") for n in range(1, 4)]
    with open_index(tmp_path / "quiet", create=True) as index:
        index.add(articles)
    assert capsys.readouterr() == ("", "")
    with open_index(tmp_path / "loud", create=True) as index:
        index.add(articles, progress=True)
    out, err = capsys.readouterr()
    assert out == "" and "indexing" in err and "doc/s" in err


def test_unfielded_words_search_title_and_abstract_as_one_text(rag_index: LiteratureIndex) -> None:
    # "aspirin" is in the title of 1000001 and the abstract of 1000002: one field finds both
    assert {"1000001", "1000002"} <= set(pmids(rag_index, "aspirin"))
    assert pmids(rag_index, "text:famotidine") == pmids(rag_index, "famotidine")
    # abstract: is an alias of the article text
    assert pmids(rag_index, "abstract:dexrazoxane") == ["1000006"]


def test_a_word_in_nearly_every_document_weighs_almost_nothing(tmp_path: Path) -> None:
    # Lucene's idf ln(1 + (N - df + 0.5) / (df + 0.5)); Whoosh's own never drops below 1
    articles = [Article(str(n), "", f"common filler words number {n}") for n in range(1, 21)]
    articles.append(Article("99", "", "common rare"))
    with open_index(tmp_path / "ix", create=True) as index:
        index.add(articles)
        (rare,) = index.search("rare", 5)
        common = index.search("common", 50)
    assert len(common) == 21
    assert all(hit.score < rare.score / 20 for hit in common)


# ------------------------------------------------- bounded wildcards, fuzzy terms and ranges


def _numbered(tmp_path: Path, *, procs: int = 1) -> LiteratureIndex:
    """An index whose abstracts hold the words zq0001 … zq3000 (one each)."""
    index = open_index(tmp_path / "numbered", create=True)
    index.add(
        (Article(str(n), "Numbered", f"zq{n:04d} marker") for n in range(1, 3001)), procs=procs
    )
    return index


def test_wildcards_that_match_too_many_terms_are_refused_where_written(tmp_path: Path) -> None:
    from rag.errors import QueryTooBroadError
    from rag.retrieval.index import MAX_EXPANDED_TERMS

    with _numbered(tmp_path) as index:
        assert len(index.search("zq1*", 2000)) == 1000  # 1,000 terms: under the limit, runs
        assert MAX_EXPANDED_TERMS == 1024
        # the limit holds for the query's parts together, and inside fields and groups
        refused = (
            ("marker zq*", "'zq\\*' matches too many", 7),
            ("zq1* zq2*", "'zq2\\*'", 5),
            ("marker AND abstract:zq*", "'abstract:zq\\*'", 11),
            ("marker NOT (title:numbered OR zq*)", "'zq\\*'", 30),
        )
        for query, message, position in refused:
            with pytest.raises(QueryTooBroadError, match=message) as caught:
                index.search(query, 10)
            assert caught.value.position == position, query
        with pytest.raises(QueryTooBroadError, match="'text:\\[zq0001 TO zq2999\\]'"):
            index.search("text:[zq0001 TO zq2999]", 10)
        # a refused query is a syntax-like error: the same handlers report it with its column
        assert isinstance(caught.value, QuerySyntaxError)


def test_expansions_may_examine_only_so_many_index_terms(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rag.errors import QueryTooBroadError
    from rag.retrieval import index as index_module

    with _numbered(tmp_path, procs=2) as index:
        reader = index._current_searcher().reader()
        assert len(list(reader.leaf_readers())) >= 2  # several segments: Whoosh's generic scans
        # without the limit, each of these finds document 7 (the fuzzy ones its neighbours too)
        for query in ("*q0007", "zq0007~1", "zq0007~1/4"):
            assert "7" in {hit.article.pmid for hit in index.search(query, 50)}, query
        monkeypatch.setattr(index_module, "MAX_EXAMINED_TERMS", 500)
        # a leading wildcard reads the whole lexicon; a fuzzy term without a prefix scans it
        for query in ("*q0007", "zq0007~1"):
            with pytest.raises(QueryTooBroadError, match="more than 500 index terms examined"):
                index.search(query, 5)
        # a fuzzy term with a prefix examines only the terms under it (zq00…: about 100)
        assert "7" in {hit.article.pmid for hit in index.search("zq0007~1/4", 50)}


def test_a_search_in_whoosh_that_runs_too_long_is_refused(tmp_path: Path) -> None:
    from rag.errors import QueryTooBroadError
    from rag.retrieval.index import SEARCH_SECONDS

    assert SEARCH_SECONDS == 10
    with _numbered(tmp_path) as index:
        query = "title:numbered OR marker"  # a field: runs in Whoosh, matches all 3,000
        assert len(index.search(query, 5000, time_limit=None)) == 3000
        with pytest.raises(QueryTooBroadError, match="ran longer than 0 s over the 3,000"):
            index.search(query, 5000, time_limit=0)
        # the limit leaves no timer behind, and the next search is whole
        assert len(index.search(query, 5000)) == 3000


def test_a_write_that_fails_on_a_full_disk_leaves_no_file_open(
    small_disk_of: Callable[[str], Path],
) -> None:
    # Issue 41: Whoosh's writer kept its segment files open when a write failed (disk full
    # during `index build`), so the files could not be removed and the disk not be freed.
    mount = small_disk_of("1m")
    words = [f"word{n}" for n in range(5000)]
    articles = [
        Article(
            str(10_000 + n),
            f"Article {n}",
            " ".join(words[(n * 7 + k) % 5000] for k in range(300)),
        )
        for n in range(4000)
    ]
    index = open_index(mount / "index", create=True)
    with pytest.raises(OSError):
        index.add(articles)
    assert open_under(mount) == []
    index.add(articles[:3])  # the write lock was released: the index takes a small add
    assert index.info().documents == 3
    index.close()
