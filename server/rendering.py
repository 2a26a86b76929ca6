"""The templates' Jinja environment, configured in one place for the app and the query workers.

The Flask app renders with its own environment (``app.jinja_env``), which adds the request
globals (``request``, ``url_for``, ``here``). A query worker writes an anonymous reader's
experiment page (``server.linked_data.part_jobs``) without Flask: ``environment`` builds an
environment over the same templates with the same escaping, ``finalize``, globals and filters
(``configure``, which the app applies to its own), so a page rendered either way is the same
bytes. A template that needs the request is not one a worker renders: calling an undefined
global fails loudly there.
"""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, select_autoescape

from server.linked_data.terms import href
from server.pages.tables import format_time, machine_time
from server.web.escape import visible
from vocab import iris

# The file names Flask autoescapes (``Flask.select_jinja_autoescape``); every template here
# is one of them.
_ESCAPED = ("html", "htm", "xml", "xhtml", "svg")


def templates_dir() -> Path:
    """Return the directory of the Jinja2 templates (``templates/``)."""
    return Path(str(resources.files("templates")))


def configure(env: Environment, base_iri: str) -> Environment:
    """Give ``env`` what every page's templates use: ``visible`` as ``finalize`` (hidden
    characters written out), the base IRI, and the filters ``href``, ``slug``, ``when`` and
    ``machine_time``; return it."""
    env.finalize = visible
    env.globals["base_iri"] = base_iri
    env.filters["href"] = lambda iri: href(str(iri), base_iri)
    env.filters["slug"] = iris.slug
    env.filters["when"] = format_time
    env.filters["machine_time"] = machine_time
    return env


@functools.cache
def environment(base_iri: str) -> Environment:
    """Return an environment rendering the templates as the app does, without Flask (one per
    base IRI, kept: templates are compiled once)."""
    env = Environment(
        loader=FileSystemLoader(str(templates_dir())),
        autoescape=select_autoescape(_ESCAPED, default_for_string=False),
        auto_reload=False,
    )
    return configure(env, base_iri)


def render(base_iri: str, template: str, **context: object) -> str:
    """Render ``template`` with ``context`` in the Flask-free environment of ``base_iri``."""
    return environment(base_iri).get_template(template).render(context)
