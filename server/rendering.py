"""The templates' Jinja environment, configured in one place for the app and the query workers.

The Flask app renders with its own environment (``app.jinja_env``), which adds the request
globals (``request``, ``url_for``, ``here``). A query worker writes an anonymous reader's
experiment page (``server.linked_data.part_jobs``) without Flask: ``environment`` builds an
environment over the same templates with the same escaping, ``finalize``, globals and filters
(``configure``, which the app applies to its own), so a page rendered either way is the same
bytes. A template that needs the request is not one a worker renders: calling an undefined
global fails loudly there.

Characters that must never reach a page as they are: a question, a system name or an answer may
hold a raw NUL, other C0/C1 control characters or Unicode's bidirectional controls (U+202E
RIGHT-TO-LEFT OVERRIDE and its kin), which would make a page lie about what it shows
(``gpj.exe`` read as ``exe.jpg``) or break the document. Every value a template prints passes
through ``visible`` (the environment's ``finalize``), which replaces each such character by its
code point in brackets (``⟦U+202E⟧``) before autoescaping: the reader sees that the data holds
it, and the page stays well formed. Tabs and line breaks are kept. Stored data is never
changed; the RDF and JSON forms carry it exactly.
"""

from __future__ import annotations

import functools
import re
from importlib import resources
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from server.linked_data.terms import href
from server.pages.tables import format_time, machine_time
from vocab import iris

# The file names Flask autoescapes (``Flask.select_jinja_autoescape``); every template here
# is one of them.
_ESCAPED = ("html", "htm", "xml", "xhtml", "svg")

# C0 controls but tab, line feed and carriage return; DEL and the C1 controls; the bidi marks,
# embeddings, overrides and isolates; the Arabic letter mark.
_HIDDEN = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)
_OPEN, _CLOSE = (
    "\N{MATHEMATICAL LEFT WHITE SQUARE BRACKET}",
    "\N{MATHEMATICAL RIGHT WHITE SQUARE BRACKET}",
)


def _shown(match: re.Match[str]) -> str:
    return f"{_OPEN}U+{ord(match.group()):04X}{_CLOSE}"


def visible(value: object) -> object:
    """Return ``value`` with hidden characters written out (other values unchanged).

    >>> visible("abc\\u202egpj.exe"), visible("a\\x00b"), visible(3)
    ('abc⟦U+202E⟧gpj.exe', 'a⟦U+0000⟧b', 3)
    """
    if isinstance(value, str) and _HIDDEN.search(value) is not None:
        replaced = _HIDDEN.sub(_shown, str(value))
        # Plain text put in place of single characters keeps safe markup safe.
        return Markup(replaced) if isinstance(value, Markup) else replaced  # noqa: S704
    return value


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
