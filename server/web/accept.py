"""The ``Accept`` header (RFC 9110, section 12.5.1), read once for every choice the server makes.

Media ranges match on type and subtype only; every parameter but ``q`` is ignored
(``application/json; charset=utf-8`` is plain JSON); the most specific range that matches gives a
form its quality. ``server.web.negotiation`` chooses representations with it, and
``preferred`` answers the smaller question "which of these media types does the client want
most" (HTML or a problem document, a page or JSON). Werkzeug's own Accept parser is used nowhere:
it compares parameters too, so ``application/json; charset=utf-8`` matched no JSON offer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from flask import request

# Accept headers longer than this are read up to this length (hostile input stays bounded).
MAX_ACCEPT_CHARS = 4096


@dataclass(frozen=True, slots=True)
class MediaRange:
    """One entry of an ``Accept`` header: ``type/subtype`` (either may be ``*``) and its ``q``."""

    type: str
    subtype: str
    q: float

    def specificity(self, media_type: str) -> int:
        """Return 2 for an exact match, 1 for ``type/*``, 0 for ``*/*``, -1 for no match."""
        kind, _, sub = media_type.partition("/")
        if self.type == "*":
            return 0
        if self.type != kind:
            return -1
        if self.subtype == "*":
            return 1
        return 2 if self.subtype == sub else -1


def _split(header: str, separator: str) -> list[str]:
    """Split on ``separator`` outside double-quoted strings (RFC 9110 quoted-string)."""
    parts: list[str] = []
    current: list[str] = []
    quoted = escaped = False
    for char in header:
        if escaped:
            escaped = False
        elif char == "\\" and quoted:
            escaped = True
        elif char == '"':
            quoted = not quoted
        elif char == separator and not quoted:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return parts


def _quality(parameters: list[str]) -> float | None:
    q = 1.0
    for parameter in parameters:
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "q":
            try:
                q = float(value.strip())
            except ValueError:
                return None
            if not 0.0 <= q <= 1.0:
                return None
    return q


def parse_accept(header: str) -> list[MediaRange]:
    """Return the media ranges of an ``Accept`` header; malformed entries are skipped.

    >>> parse_accept('text/turtle; charset=utf-8, application/ld+json;profile="a,b";q=0.5')
    [MediaRange(type='text', subtype='turtle', q=1.0), MediaRange(type='application', \
subtype='ld+json', q=0.5)]
    """
    ranges = []
    for entry in _split(header[:MAX_ACCEPT_CHARS], ","):
        media, *parameters = _split(entry, ";")
        kind, slash, sub = media.strip().lower().partition("/")
        q = _quality(parameters)
        if not slash or not kind or not sub or q is None or (kind == "*" and sub != "*"):
            continue
        ranges.append(MediaRange(kind, sub, q))
    return ranges


def media_quality(media_types: Sequence[str], ranges: Sequence[MediaRange]) -> tuple[float, int]:
    """Return ``(q, specificity)`` of a form named by ``media_types`` under ``ranges``.

    ``(0, -1)`` if nothing matches.

    The most specific range matching any of the form's media types decides (the highest ``q``
    among equally specific ones): ``text/turtle;q=0, */*`` refuses Turtle, whatever its aliases.
    """
    found: tuple[int, float] = (-1, 0.0)
    for media_type in media_types:
        for media_range in ranges:
            specificity = media_range.specificity(media_type)
            if specificity >= 0 and (specificity, media_range.q) > found:
                found = (specificity, media_range.q)
    return found[1], found[0]


def preferred(candidates: Sequence[Sequence[str]], header: str | None = None) -> int | None:
    """Return the index of the candidate the ``Accept`` header prefers (None: none acceptable).

    Each candidate is a form's media types (its own and its aliases); equal qualities go to the
    more specific range, then to the earlier candidate. Without a header the first candidate
    wins.

    >>> preferred([["text/html"], ["application/json"]], "application/json; charset=utf-8")
    1
    >>> preferred([["text/html"], ["application/json"]], "text/html;q=0.9, */*;q=0.8")
    0
    >>> preferred([["text/html"]], "image/png") is None
    True
    """
    text = request.headers.get("Accept", "") if header is None else header
    ranges = parse_accept(text)
    if not ranges:
        return 0 if candidates else None
    scored = [(media_quality(c, ranges), -i) for i, c in enumerate(candidates)]
    (q, _specificity), index = max(scored)
    return -index if q > 0 else None
