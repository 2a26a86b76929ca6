"""The HTML page of a system (``/system/{slug}``): what it is and every task it took part in.

The experiments that describe a system are found through the quad index (``?system a
qab:System`` per experiment graph), newest first and at most ``MAX_EXPERIMENTS`` of them, each
only if the reader may see its graph; per experiment the page reads the tasks of this system
with their QA results. Nothing outside the visible experiment graphs is read.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice

from flask import Blueprint, Response, render_template
from pyoxigraph import Literal, NamedNode

from evaluators.experiments.read import TaskSummary
from server.linked_data.routes import alternate_links, serve_resource
from server.pages.experiments import cached_experiment
from server.pages.tables import Footnotes, main_columns, qald_rows
from server.services import Services, Visibility
from server.sparql.page import query_link
from server.web.problems import Problem
from store import graphs, queries
from vocab.project import QAB
from vocab.standard import DCTERMS, RDF, RDFS

bp = Blueprint("system", __name__)

MAX_EXPERIMENTS = 100
_SCAN = 10_000


@dataclass(frozen=True, slots=True)
class SystemFacts:
    """What the system page says about the system itself."""

    label: str
    kinds: tuple[str, ...]
    descriptions: tuple[str, ...]


def _literals(svc: Services, iri: NamedNode, predicate: NamedNode, graph: NamedNode) -> list[str]:
    return [
        q.object.value
        for q in svc.store.quads(iri, predicate, None, graph)
        if isinstance(q.object, Literal)
    ]


def system_page(svc: Services, iri: NamedNode, vis: Visibility) -> str:
    """Render a system with its tasks in the experiments the reader may see.

    Raises:
        Problem: 404 when no visible graph describes the system.
    """
    prefix = graphs.experiment_graph_prefix(svc.base)
    described = sorted(
        {
            q.graph_name.value: q.graph_name
            for q in islice(svc.store.quads(iri, RDF.type, QAB.System), _SCAN)
            if isinstance(q.graph_name, NamedNode) and vis.can_see(q.graph_name)
        }.items(),
        reverse=True,
    )
    if not described:
        raise Problem(404, f"There is no system {iri.value} (or it is not published).")
    labels: set[str] = set()
    kinds: set[str] = set()
    descriptions: set[str] = set()
    tasks: list[TaskSummary] = []
    experiments = 0
    for name, graph in described:
        labels.update(_literals(svc, iri, RDFS.label, graph))
        kinds.update(_literals(svc, iri, QAB.systemKind, graph))
        descriptions.update(_literals(svc, iri, DCTERMS.description, graph))
        if not name.startswith(prefix) or experiments >= MAX_EXPERIMENTS:
            continue
        experiments += 1
        read = cached_experiment(svc, name[len(prefix) :])
        own = {label for label in _literals(svc, iri, RDFS.label, graph)}
        tasks.extend(t for t in read.tasks if t.plan.system in own)
    facts = SystemFacts(
        min(labels) if labels else iri.value.rsplit("/", 1)[-1],
        tuple(sorted(kinds)),
        tuple(sorted(descriptions)),
    )
    notes = Footnotes()
    return render_template(
        "system.html",
        title=f"System {facts.label}",
        iri=iri.value,
        facts=facts,
        columns=main_columns(),
        rows=qald_rows(tuple(tasks), notes),
        footnotes=notes.listing(),
        experiments=experiments,
        limit=MAX_EXPERIMENTS,
        alternates=alternate_links(),
        query_href=query_link(
            queries.load("page_system_tasks").replace("#BINDINGS#", f"VALUES ?system {{ {iri} }}")
        ),
    )


@bp.route("/system/<path:rest>")
def system(rest: str) -> Response:
    """A QA system: this page, or its document as RDF."""
    return serve_resource("system", rest, system_page)
