"""Characters that must never reach a page as they are: controls and bidirectional overrides.

A question, a system name or an answer may hold a raw NUL, other C0/C1 control characters or
Unicode's bidirectional controls (U+202E RIGHT-TO-LEFT OVERRIDE and its kin), which would make a
page lie about what it shows (``gpj.exe`` read as ``exe.jpg``) or break the document. Every value
a template prints passes through ``visible`` (the Jinja environment's ``finalize``), which
replaces each such character by its code point in brackets (``⟦U+202E⟧``) before autoescaping:
the reader sees that the data holds it, and the page stays well formed. Tabs and line breaks
are kept. Stored data is never changed; the RDF and JSON forms carry it exactly.
"""

from __future__ import annotations

import re

from markupsafe import Markup

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
