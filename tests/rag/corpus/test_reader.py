"""Corpus readers: JSON Lines, JSON, TSV, PubMed XML and in-memory records."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from rag.corpus.article import Article
from rag.corpus.reader import CorpusFormat, articles_from_records, detect_format, read_corpus
from rag.errors import CorpusFormatError

PUBMEDQA = "pubmed/pubmedqa_pubmedqa/data/ori_pqal.json"
CDR = "pubmed/cryptoradon_biomedRelExt/CDR_Data/CDR.Corpus.v010516"


def write(path: Path, text: str) -> Path:
    path.write_text(text, "utf-8")
    return path


def test_jsonl_records_with_optional_fields(tmp_path: Path) -> None:
    path = write(
        tmp_path / "c.jsonl",
        '{"pmid": 12, "title": "T1", "abstract": "A1", "mesh": ["M1", " "], "year": "1999"}\n'
        "\n"
        '{"pmid": "13", "title": "", "abstract": "A2", "year": null}\n',
    )
    assert list(read_corpus(path)) == [
        Article("12", "T1", "A1", ("M1",), 1999),
        Article("13", "", "A2", (), None),
    ]


JSONL_ERRORS = [
    ('{"pmid": "1", "title": "t", "abstract": "a"}\n{"pmid": 2,\n', 2, "not JSON"),
    ('["1", "t", "a"]\n', 1, "found list"),
    ('{"pmid": "1", "title": "t"}\n', 1, "missing 'abstract'"),
    ('{"pmid": "1 2", "title": "t", "abstract": "a"}\n', 1, "without spaces"),
    ('{"pmid": true, "title": "t", "abstract": "a"}\n', 1, "'pmid' is True"),
    ('{"pmid": "1", "title": 5, "abstract": "a"}\n', 1, "'title' is int"),
    ('{"pmid": "1", "title": "t", "abstract": "a", "mesh": "M"}\n', 1, "'mesh'"),
    ('{"pmid": "1", "title": "t", "abstract": "a", "year": "99"}\n', 1, "four-digit year"),
]


@pytest.mark.parametrize(("text", "line", "fragment"), JSONL_ERRORS)
def test_malformed_jsonl_lines_name_file_line_and_shape(
    tmp_path: Path, text: str, line: int, fragment: str
) -> None:
    path = write(tmp_path / "bad.jsonl", text)
    with pytest.raises(CorpusFormatError) as caught:
        list(read_corpus(path))
    assert caught.value.line == line
    assert caught.value.source == str(path)
    assert fragment in caught.value.detail
    assert str(caught.value).startswith(f"{path}:{line}: ")
    if fragment != "not JSON":
        assert '"pmid": "123"' in caught.value.detail  # the expected shape is shown


def test_json_list_and_object_keyed_by_pmid(tmp_path: Path) -> None:
    listed = write(
        tmp_path / "l.json",
        '[\n {"pmid": "1", "title": "a", "abstract": "b"},\n {"pmid": "2", "title": "c", '
        '"abstract": "d", "year": 2020}\n]\n',
    )
    keyed = write(tmp_path / "k.json", '{"7": {"title": "x", "abstract": "y", "mesh": ["z"]}}')
    assert [a.pmid for a in read_corpus(listed)] == ["1", "2"]
    assert list(read_corpus(keyed)) == [Article("7", "x", "y", ("z",))]


def test_json_errors_report_the_line_of_the_entry(tmp_path: Path) -> None:
    path = write(
        tmp_path / "l.json",
        '[\n  {"pmid": "1", "title": "a", "abstract": "b"},\n\n  {"pmid": "2", "title": "c"}\n]',
    )
    with pytest.raises(CorpusFormatError) as caught:
        list(read_corpus(path))
    assert caught.value.line == 4
    assert "missing 'abstract'" in caught.value.detail


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ('[{"pmid": "1", "title": "a", "abstract": "b"}\n{"x": 1}]', 2, "expected ','"),
        ('[{"pmid": "1", "title": "a", "abstract": "b"},\n {"pmid": }]', 2, "not valid JSON"),
        ('"just a string"', 1, "expected a JSON array"),
        ('[{"pmid": "1", "title": "a", "abstract": "b"}', 1, "unterminated"),
        ('[{"pmid": "1", "title": "a", "abstract": "b"}] []', 1, "trailing"),
    ],
)
def test_broken_json_files_are_reported(
    tmp_path: Path, text: str, line: int, fragment: str
) -> None:
    with pytest.raises(CorpusFormatError) as caught:
        list(read_corpus(write(tmp_path / "b.json", text)))
    assert caught.value.line == line
    assert fragment in caught.value.detail


def test_pubmedqa_shape_becomes_untitled_articles(tmp_path: Path) -> None:
    entry = {
        "QUESTION": "Does it work?",
        "CONTEXTS": ["First section.", "Second section."],
        "LABELS": ["BACKGROUND", "RESULTS"],
        "MESHES": ["Humans"],
        "YEAR": "2011",
        "final_decision": "yes",
    }
    path = write(tmp_path / "q.json", json.dumps({"555": entry}))
    assert list(read_corpus(path)) == [
        Article("555", "", "First section. Second section.", ("Humans",), 2011)
    ]


def test_real_pubmedqa_file_gives_1000_articles(shared_data: Path) -> None:
    articles = list(read_corpus(shared_data / PUBMEDQA))
    assert len(articles) == 1000
    assert len({a.pmid for a in articles}) == 1000
    assert all(a.pmid.isdigit() and a.abstract and not a.title for a in articles)
    assert sum(a.year is not None for a in articles) == 942
    assert all(a.mesh for a in articles[:10])


def test_real_cdr_tsv_files(shared_data: Path) -> None:
    files = sorted((shared_data / CDR).glob("*.tsv"))
    counts = {f.name.split(".")[0]: len(list(read_corpus(f))) for f in files}
    assert counts == {"CDR_DevelopmentSet": 500, "CDR_TestSet": 500, "CDR_TrainingSet": 1000}
    union = {a.pmid for f in files for a in read_corpus(f)}
    assert len(union) == 1500
    quoted = next(a for a in read_corpus(files[1]) if a.pmid == "23892921")
    assert quoted.title.startswith('"Real-world" data')


def test_tsv_with_header_optional_columns_and_quoting(tmp_path: Path) -> None:
    path = write(
        tmp_path / "c.tsv",
        'pmid\tyear\ttitle\tabstract\tmesh\n1\t2001\t"A ""quoted"" title"\t"two\nlines"\tM1;M2\n',
    )
    assert list(read_corpus(path)) == [
        Article("1", 'A "quoted" title', "two\nlines", ("M1", "M2"), 2001)
    ]


def test_tsv_without_header_is_positional(tmp_path: Path) -> None:
    path = write(tmp_path / "c.tsv", "1\tTitle\tAbstract\n2\tT2\tA2\n")
    assert [a.pmid for a in read_corpus(path)] == ["1", "2"]


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("pmid\ttitle\tabstract\n1\tT\tA\n2\tT only\n", 3, "found 2 columns; expected 3"),
        ("pmid\ttitle\tbody\n", 1, "header"),
        ("1\tT\n", 1, "found 2 columns"),
        ("pmid\ttitle\tabstract\tyear\n1\tT\tA\tlast year\n", 2, "four-digit year"),
    ],
)
def test_malformed_tsv_rows(tmp_path: Path, text: str, line: int, fragment: str) -> None:
    with pytest.raises(CorpusFormatError) as caught:
        list(read_corpus(write(tmp_path / "c.tsv", text)))
    assert caught.value.line == line
    assert fragment in caught.value.detail


PUBMED_XML = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2025//EN" \
"https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">
<PubmedArticleSet>
 <PubmedArticle>
  <MedlineCitation Status="MEDLINE" Owner="NLM">
   <PMID Version="1">111</PMID>
   <Article PubModel="Print">
    <Journal><JournalIssue><PubDate><MedlineDate>1998 Dec-1999 Jan</MedlineDate></PubDate>
    </JournalIssue></Journal>
    <ArticleTitle>Effect of <i>Xenopus</i> Na<sup>+</sup> channels.</ArticleTitle>
    <Abstract>
     <AbstractText Label="BACKGROUND">First part.</AbstractText>
     <AbstractText Label="RESULTS">Second part, café.</AbstractText>
    </Abstract>
   </Article>
   <MeshHeadingList>
    <MeshHeading><DescriptorName UI="D1">Humans</DescriptorName></MeshHeading>
    <MeshHeading><DescriptorName UI="D2">Sodium Channels</DescriptorName></MeshHeading>
   </MeshHeadingList>
  </MedlineCitation>
 </PubmedArticle>
 <PubmedBookArticle><BookDocument><PMID>5</PMID></BookDocument></PubmedBookArticle>
 <PubmedArticle>
  <MedlineCitation><PMID>112</PMID>
   <Article><Journal><JournalIssue><PubDate><Year>2004</Year></PubDate></JournalIssue>
   </Journal><ArticleTitle>No abstract here.</ArticleTitle></Article>
  </MedlineCitation>
 </PubmedArticle>
</PubmedArticleSet>
"""


def test_pubmed_xml_with_standard_doctype(tmp_path: Path) -> None:
    expected = [
        Article(
            "111",
            "Effect of Xenopus Na+ channels.",
            "First part. Second part, café.",
            ("Humans", "Sodium Channels"),
            1998,
        ),
        Article("112", "No abstract here.", "", (), 2004),
    ]
    assert list(read_corpus(write(tmp_path / "p.xml", PUBMED_XML))) == expected
    packed = tmp_path / "p.xml.gz"
    packed.write_bytes(gzip.compress(PUBMED_XML.encode()))
    assert list(read_corpus(packed)) == expected


@pytest.mark.parametrize(
    ("text", "fragment", "line"),
    [
        (
            '<?xml version="1.0"?>\n<!DOCTYPE PubmedArticleSet [<!ENTITY x "boom">]>\n'
            "<PubmedArticleSet/>",
            "internal subset",
            None,
        ),
        (
            '<?xml version="1.0"?>\n<!DOCTYPE html>\n<PubmedArticleSet/>',
            "document type 'html'",
            None,
        ),
        ("<?xml version='1.0'?>\n<html><body/></html>", "root element <html>", None),
        (
            "<PubmedArticleSet>\n<PubmedArticle>\n</PubmedArticleSet>\n",
            "malformed XML",
            3,
        ),
        (
            "<PubmedArticleSet><PubmedArticle><MedlineCitation><Article/></MedlineCitation>"
            "</PubmedArticle></PubmedArticleSet>",
            "article 1 has no MedlineCitation/PMID",
            None,
        ),
    ],
)
def test_unsafe_or_malformed_xml_is_refused(
    tmp_path: Path, text: str, fragment: str, line: int | None
) -> None:
    with pytest.raises(CorpusFormatError) as caught:
        list(read_corpus(write(tmp_path / "p.xml", text)))
    assert fragment in caught.value.detail
    assert caught.value.line == line


def test_entity_expansion_is_refused_even_with_the_pubmed_doctype(tmp_path: Path) -> None:
    text = PUBMED_XML.replace(
        '"https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">',
        '"https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd" [<!ENTITY e "x">]>',
    ).replace("First part.", "&e;")
    with pytest.raises(CorpusFormatError, match="internal subset"):
        list(read_corpus(write(tmp_path / "p.xml", text)))


def test_records_from_a_knowledge_base() -> None:
    records = [("http://dbpedia.org/resource/Aspirin", "Aspirin", "Aspirin is a drug.")]
    assert list(articles_from_records(records, source="kb")) == [
        Article("http://dbpedia.org/resource/Aspirin", "Aspirin", "Aspirin is a drug.")
    ]
    with pytest.raises(CorpusFormatError) as caught:
        list(articles_from_records([records[0], ("x", "y")], source="kb"))  # type: ignore[list-item]
    assert (caught.value.source, caught.value.line) == ("kb", 2)


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("a.jsonl", CorpusFormat.JSONL),
        ("a.ndjson.gz", CorpusFormat.JSONL),
        ("a.json", CorpusFormat.JSON),
        ("a.TSV", CorpusFormat.TSV),
        ("pubmed25n0001.xml.gz", CorpusFormat.PUBMED_XML),
    ],
)
def test_format_detection(name: str, fmt: CorpusFormat) -> None:
    assert detect_format(Path(name)) is fmt


def test_unknown_suffix_suggests_the_format_option() -> None:
    with pytest.raises(CorpusFormatError, match="--format"):
        detect_format(Path("corpus.csv"))


def test_missing_file_is_a_corpus_error(tmp_path: Path) -> None:
    with pytest.raises(CorpusFormatError, match="cannot open"):
        list(read_corpus(tmp_path / "absent.jsonl"))
