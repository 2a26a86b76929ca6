"""RDF/XML inputs are checked before a parser sees them: entity declarations that could grow on
expansion are refused, namespace abbreviations pass (issue 41: a 1.6 KB file of nested
declarations, never used, ran ``qabench kb load`` for 46 s up to 13.9 GB)."""

from __future__ import annotations

import io
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from pyoxigraph import NamedNode, RdfFormat

from store.errors import RdfSyntaxError
from store.formats import xml_checked
from store.triplestore import TripleStore
from tests import REPO

RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"


def _document(declarations: str, body: str = "") -> bytes:
    return (
        f'<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [\n{declarations}\n]>\n'
        f'<rdf:RDF xmlns:rdf="{RDF}" xmlns:ex="http://example.org/">\n'
        f'<rdf:Description rdf:about="http://example.org/s">{body}</rdf:Description>\n'
        "</rdf:RDF>\n"
    ).encode()


def bomb(levels: int = 12) -> bytes:
    """Nested entity declarations, declared and never used (the issue's shape)."""
    lines = ['<!ENTITY e0 "lolololololololololololololololololololol">']
    lines += [f'<!ENTITY e{n} "{f"&e{n - 1};" * 10}">' for n in range(1, levels)]
    return _document("\n".join(lines))


REFUSED = {
    "nested": bomb(),
    "parameter": _document('<!ENTITY % p "x">'),
    "external": _document('<!ENTITY ext SYSTEM "file:///etc/passwd">'),
    "too large": _document(f'<!ENTITY big "{"x" * 70_000}">'),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_entity_declarations_that_could_grow_are_refused_in_every_form(name: str) -> None:
    data = REFUSED[name]
    assert len(REFUSED) == 4
    for source in (data, io.BytesIO(data)):
        with pytest.raises(RdfSyntaxError, match="entity declarations refused"):
            xml_checked(source)


def test_namespace_abbreviations_load_and_a_stream_is_replayed_whole(tmp_path: Path) -> None:
    data = _document('<!ENTITY ex "http://example.org/">', '<ex:p rdf:resource="&ex;o"/>')
    checked = xml_checked(io.BytesIO(data))
    assert not isinstance(checked, (bytes, Path)) and checked.read() == data
    store = TripleStore.open(tmp_path / "store")
    try:
        store.load(io.BytesIO(data), RdfFormat.RDF_XML, graph=NamedNode("http://g.test/"))
        assert [q.object for q in store.quads(None, None, None, None)] == [
            NamedNode("http://example.org/o")
        ]
        # (a bomb is parsed only in a capped process: below)
    finally:
        store.close()


def _capped() -> None:
    # The old parser took 13.9 GB on the file: cap it so this test fails, not the host.
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))


def test_kb_load_refuses_an_entity_bomb_at_once(tmp_path: Path) -> None:
    path = tmp_path / "bomb.rdf"
    path.write_bytes(bomb(9))
    assert len(path.read_bytes()) < 2000
    command = [sys.executable, "-m", "server", "--data-dir", str(tmp_path / "data")]
    try:
        done = subprocess.run(
            [*command, "kb", "load", str(path), "--name", "bomb"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
            preexec_fn=_capped,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("kb load went on parsing the entity bomb for a minute")
    assert done.returncode == 2, done.stderr[-500:]
    assert "entity declarations refused" in done.stderr
