"""Mint instance IRIs from a base IRI. This is the only place where IRIs are built from strings.

URL layout (every path below is relative to the configured base IRI, which has no trailing slash):

    /dataset/{name}                             a benchmark (qab:Dataset)
    /dataset/{name}/v{n}                        one loaded version (qab:DatasetVersion)
    /dataset/{name}/v{n}/question/{id}          a question of that version
    /experiment/{YYYYMMDDNNNN}                  an experiment
    /task/{experiment}/{n}                      one task of an experiment
    /system/{slug}                              a QA system
    /kb/{name}                                  a knowledge base
    /rag/run/{id}                               one answer of the built-in RAG system
    /graph/...                                  named graphs (see store.graphs)

``parse`` is the inverse: it reads an IRI (or a URL path) back into a ``Ref`` that names the
kind of resource and its decoded parts, so no caller takes IRIs apart by hand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote, unquote

from pyoxigraph import NamedNode

_SLUG_BAD = re.compile(r"[^A-Za-z0-9._-]+")


def slug(text: str) -> str:
    """Return a lowercase URL-safe slug of ``text`` (runs of other characters become ``-``).

    >>> slug("QALD-9 Test (multilingual)")
    'qald-9-test-multilingual'
    """
    cleaned = _SLUG_BAD.sub("-", text.strip()).strip("-.").lower()
    return cleaned or "unnamed"


def segment(text: str) -> str:
    """Return ``text`` percent-encoded as one path segment.

    >>> segment("a b/c")
    'a%20b%2Fc'
    """
    return quote(text, safe="-._~!$&'()*+,;=:@")


def _join(base: str, *parts: str) -> NamedNode:
    return NamedNode(base.rstrip("/") + "/" + "/".join(parts))


def dataset_iri(base: str, name: str) -> NamedNode:
    """Return the IRI of the benchmark called ``name``."""
    return _join(base, "dataset", segment(name))


def dataset_version_iri(base: str, name: str, version: int) -> NamedNode:
    """Return the IRI of version ``version`` of benchmark ``name``."""
    return _join(base, "dataset", segment(name), f"v{version}")


def question_iri(base: str, name: str, version: int, question_id: str) -> NamedNode:
    """Return the IRI of one question of a dataset version."""
    return _join(base, "dataset", segment(name), f"v{version}", "question", segment(question_id))


def sub_iri(parent: NamedNode, *parts: str) -> NamedNode:
    """Return an IRI below ``parent`` (answer sets, annotations, findings, observations).

    >>> sub_iri(NamedNode("http://x/q/1"), "answers", "0").value
    'http://x/q/1/answers/0'
    """
    return NamedNode(parent.value + "/" + "/".join(segment(p) for p in parts))


def experiment_iri(base: str, experiment_id: str) -> NamedNode:
    """Return the IRI of an experiment (``YYYYMMDDNNNN``)."""
    return _join(base, "experiment", segment(experiment_id))


def task_iri(base: str, experiment_id: str, number: int) -> NamedNode:
    """Return the IRI of task ``number`` of an experiment."""
    return _join(base, "task", segment(experiment_id), str(number))


def system_iri(base: str, name: str) -> NamedNode:
    """Return the IRI of the system called ``name``."""
    return _join(base, "system", slug(name))


def kb_iri(base: str, name: str) -> NamedNode:
    """Return the IRI of the knowledge base called ``name``."""
    return _join(base, "kb", segment(name))


def rag_run_iri(base: str, run_id: str) -> NamedNode:
    """Return the IRI of one stored RAG answer."""
    return _join(base, "rag", "run", segment(run_id))


def graph_iri(base: str, *parts: str) -> NamedNode:
    """Return the IRI of a named graph (the policy lives in ``store.graphs``)."""
    return _join(base, "graph", *(segment(p) for p in parts))


def page_iri(base: str, *parts: str) -> NamedNode:
    """Return an IRI for a server document such as ``/sparql`` or ``/.well-known/void``."""
    return _join(base, *parts)


def _last(iri: str) -> str:
    return unquote(iri.rstrip("/").rsplit("/", 1)[-1])


def experiment_id_of(iri: str) -> str:
    """Return the id an experiment's IRI (or its graph's IRI) ends with; the inverse of
    ``experiment_iri`` for IRIs read back from the store, whatever their base.

    >>> experiment_id_of("http://x.test/experiment/202401010001")
    '202401010001'
    >>> experiment_id_of("http://x.test/graph/experiment/202401010001")
    '202401010001'
    """
    return _last(iri)


def task_number_of(iri: str) -> int | None:
    """Return the number of a task IRI (``…/task/{experiment}/{n}``); None for anything else.

    >>> task_number_of("http://x.test/task/202401010001/3")
    3
    >>> task_number_of("http://x.test/task/202401010001/3/question/7") is None
    True
    """
    head, _, number = iri.rpartition("/")
    _, found, experiment = head.rpartition("/task/")
    if not number.isdigit() or not found or "/" in experiment:
        return None
    return int(number)


def question_id_of(iri: str) -> str:
    """Return the id a question's IRI ends with (``…/question/{id}``); the inverse of
    ``question_iri`` for IRIs read back from the store.

    >>> question_id_of("http://x.test/dataset/d/v1/question/a%20b")
    'a b'
    """
    return _last(iri)


def version_of(iri: str) -> tuple[str, int]:
    """Return ``(name, number)`` of a dataset version IRI (``…/dataset/{name}/v{n}``); the
    number is 0 when the IRI ends with no version.

    >>> version_of("http://x.test/dataset/qald-9%20test/v2")
    ('qald-9 test', 2)
    """
    head, _, tail = iri.rstrip("/").rpartition("/v")
    return _last(head), int(tail) if tail.isdigit() else 0


@dataclass(frozen=True, slots=True)
class Ref:
    """What an IRI of the URL layout names: its kind and its decoded path segments.

    Kinds: ``dataset`` (name), ``version`` (name, number), ``question`` (name, number, id),
    ``experiment`` (id), ``task`` (experiment id, number), ``system`` (slug), ``kb`` (name),
    ``rag-run`` (id), ``graph`` (segments), and ``other`` for anything else below the base
    (its segments), including IRIs below a resource (``/task/1/2/question/7/QA``: the owner
    is ``Ref.owner``).
    """

    kind: str
    parts: tuple[str, ...]
    rest: tuple[str, ...] = ()

    @property
    def experiment(self) -> str | None:
        """Return the id of the experiment that holds this resource (experiments, tasks and
        everything below them), else None."""
        return self.parts[0] if self.kind in ("experiment", "task") else None

    @property
    def number(self) -> int:
        """Return the number of a version, a version's question, or a task (0 otherwise)."""
        numbered = self.kind in ("version", "question", "task") and len(self.parts) > 1
        return int(self.parts[1]) if numbered else 0

    @property
    def exact(self) -> bool:
        """Return whether the IRI is the resource itself, not something below it."""
        return not self.rest


# kind, the first path segment, and the shape of the segments after it (``*``: any one).
_LAYOUT: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("question", "dataset", ("*", "v#", "question", "*")),
    ("version", "dataset", ("*", "v#")),
    ("dataset", "dataset", ("*",)),
    ("task", "task", ("*", "#")),
    # below an experiment's tasks but not a task: still that experiment's (no number)
    ("task", "task", ("*",)),
    ("experiment", "experiment", ("*",)),
    ("system", "system", ("*",)),
    ("kb", "kb", ("*",)),
    ("rag-run", "rag", ("run", "*")),
)


def _fits(segments: list[str], shape: tuple[str, ...]) -> bool:
    if len(segments) < len(shape):
        return False
    for segment, want in zip(segments, shape, strict=False):
        if want == "#" and not segment.isdigit():
            return False
        if want == "v#" and not (segment[:1] == "v" and segment[1:].isdigit()):
            return False
        if want not in ("*", "#", "v#") and segment != want:
            return False
    return all(segments[: len(shape)])


def parse(base: str, iri: str) -> Ref | None:
    """Return what ``iri`` (an IRI under ``base``, or a site path) names; None if outside.

    >>> parse("http://x.test", "http://x.test/task/202401010001/3")
    Ref(kind='task', parts=('202401010001', '3'), rest=())
    >>> parse("http://x.test", "/dataset/qald-9/v2/question/7").number
    2
    >>> ref = parse("http://x.test", "http://x.test/experiment/42/cube")
    >>> ref.kind, ref.experiment, ref.exact
    ('experiment', '42', False)
    >>> parse("http://x.test", "http://x.test/system/a%20b").parts
    ('a b',)
    >>> parse("http://x.test", "http://elsewhere.test/experiment/1") is None
    True
    """
    prefix = base.rstrip("/") + "/"
    if iri.startswith(prefix):
        path = iri[len(prefix) :]
    elif iri.startswith("/"):
        path = iri[1:]
    else:
        return None
    path = path.split("#", 1)[0].split("?", 1)[0]
    head, _, tail = path.partition("/")
    segments = tail.split("/") if tail else []
    if head == "graph":
        return Ref("graph", tuple(unquote(s) for s in segments))
    for kind, first, shape in _LAYOUT:
        if head == first and _fits(segments, shape):
            picked = [
                unquote(s[1:] if want == "v#" else s)
                for s, want in zip(segments, shape, strict=False)
                if want in ("*", "#", "v#")
            ]
            return Ref(kind, tuple(picked), tuple(unquote(s) for s in segments[len(shape) :]))
    return Ref("other", tuple(unquote(s) for s in [head, *segments] if s))
