"""Comparison keys and variants of answer terms: the URI and literal rules of every profile.

Pure string work, no knowledge base and no I/O. ``matching`` and ``subexperiments`` decide what to
compare; this module only says what a term looks like after normalisation:

* GERBIL's tests on strings (is it an IRI? a URL Apache's ``UrlValidator`` would accept?) and its
  static owl:sameAs retrievers (``en.dbpedia.org`` fix, percent-encoding of the last path segment,
  the DBpedia/Wikipedia bridge for 18 languages, ``data.nytimes.com`` filtered out);
* the strict profile's keys: ``uri_key`` (http/https, percent-encoding, Wikipedia/DBpedia bridge,
  Wikidata entity/wiki forms) and ``literal_key`` (numbers by value, dates and dateTimes
  normalised, booleans case-insensitive, strings with their language tag kept apart).
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from decimal import Decimal, InvalidOperation
from urllib.parse import quote_plus, unquote, unquote_plus

from pyoxigraph import NamedNode

from evaluators.model import AnswerValue
from vocab.standard import XSD

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*")
_GERBIL_IRI_SHAPE = re.compile(r"\S+:\S+")
# characters java.net.URI refuses anywhere (RFC 2396 "unwise" and delimiters)
_URI_ILLEGAL = re.compile(r'[\s"<>\\^`{|}\[\]]|%(?![0-9A-Fa-f]{2})')
# Apache Commons UrlValidator, default schemes: an approximation without its TLD list
_URL = re.compile(
    r"(?i:https?|ftp)://(?:[^\s@/?#]+@)?"
    r"(?:(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}\.?"
    r"|\d{1,3}(?:\.\d{1,3}){3})"
    r"(?::\d{1,5})?"
    r"(?:/[-\w:@&?=+,.!/~*'%$;()]*)?(?:\?\S*)?(?:#\S*)?",
    re.ASCII,
)
# GERBIL's WikiDbPediaBridging languages ("en" is dbpedia.org itself)
_WIKI_NAMES = "bg ca cs de en es eu fr hu id it ja ko nl pl pt ru tr"
_WIKI_LANGUAGES = frozenset(_WIKI_NAMES.split())
_DBPEDIA_RESOURCE = re.compile(r"https?://(?:([a-z]{2})\.)?dbpedia\.org/resource/(.+)")
_WIKIPEDIA_PAGE = re.compile(r"https?://([a-z]{2})\.(?:m\.)?wikipedia\.org/wiki/(.+)")
_WIKIPEDIA_HOST = re.compile(r"([a-z]{2,3})\.(?:m\.)?wikipedia\.org")
_WIKIDATA_WIKI = re.compile(r"/wiki/(?:Property:|Lexeme:)?([QPL]\d+)")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_DATE = re.compile(
    r"(-?\d{4,})-(\d{1,2})-(\d{1,2})"
    r"(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?"
)
_NUMERIC_NAMES = (
    "integer decimal double float int long short byte nonNegativeInteger nonPositiveInteger "
    "positiveInteger negativeInteger unsignedLong unsignedInt unsignedShort unsignedByte gYear"
)
_NUMERIC_TYPES = frozenset(XSD.iri + name for name in _NUMERIC_NAMES.split())
_DATE_TYPES = frozenset({XSD.date.value, XSD.dateTime.value, XSD.iri + "dateTimeStamp"})
_STRING_TYPES = frozenset(
    {XSD.string.value, "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"}
)

# A comparison key: ("iri", uri), ("num", value), ("date", iso), ("bool", "true"), ("str", text)
Key = tuple[str, str]


def is_gerbil_iri(text: str) -> bool:
    """Return whether GERBIL treats a gold or system answer string as an IRI.

    GERBIL requires ``\\S+:\\S+`` and that ``java.net.URI`` parses the string; the second test is
    approximated by refusing the characters ``java.net.URI`` refuses and a bad scheme.

    >>> is_gerbil_iri("http://dbpedia.org/resource/Berlin"), is_gerbil_iri("1961-08-04T00:00:00Z")
    (True, False)
    """
    if not _GERBIL_IRI_SHAPE.fullmatch(text) or _URI_ILLEGAL.search(text):
        return False
    colon = text.index(":")
    before = min((text.find(c) for c in "/?#" if c in text), default=len(text))
    return colon > before or bool(_SCHEME.fullmatch(text[:colon]))


def is_url(text: str) -> bool:
    """Return whether Apache's ``UrlValidator`` (http, https, ftp) would accept ``text``.

    >>> is_url("http://kb.com/1"), is_url("Paris"), is_url("http://localhost/x")
    (True, False, False)
    """
    return bool(_URL.fullmatch(text))


def _java_url_encode(segment: str) -> str:
    # java.net.URLEncoder keeps letters, digits and ".-*_"; Python's quote_plus also keeps "~"
    return quote_plus(segment, safe="*").replace("~", "%7E")


def _static_variants(uri: str) -> set[str]:
    found: set[str] = set()
    if "://en.dbpedia.org/" in uri:
        found.add(uri.replace("://en.dbpedia.org/", "://dbpedia.org/", 1))
    head, slash, last = uri.rpartition("/")
    if slash and last:
        if re.search(r"%[0-9A-Fa-f]{2}", last):
            found.add(head + "/" + unquote_plus(last))
        else:
            found.add(head + "/" + _java_url_encode(last))
    match = _DBPEDIA_RESOURCE.fullmatch(uri)
    if match and (match.group(1) or "en") in _WIKI_LANGUAGES:
        found.add(f"http://{match.group(1) or 'en'}.wikipedia.org/wiki/{match.group(2)}")
    match = _WIKIPEDIA_PAGE.fullmatch(uri)
    if match and match.group(1) in _WIKI_LANGUAGES:
        host = "dbpedia.org" if match.group(1) == "en" else f"{match.group(1)}.dbpedia.org"
        found.add(f"http://{host}/resource/{match.group(2)}")
    found.discard(uri)
    return found


def gerbil_uri_variants(uri: str, limit: int = 64) -> frozenset[str]:
    """Return ``uri`` with the closure of GERBIL's static sameAs retrievers.

    Args:
        uri: the IRI as given.
        limit: stop crawling after this many variants (GERBIL's crawl is unbounded).

    Returns:
        The variants including ``uri``; ``data.nytimes.com`` IRIs are dropped (GERBIL filters
        them because of wrong sameAs links).

    >>> sorted(gerbil_uri_variants("https://dbpedia.org/resource/China"))[:2]
    ['http://dbpedia.org/resource/China', 'http://en.wikipedia.org/wiki/China']
    """
    seen = {uri}
    frontier = [uri]
    while frontier and len(seen) < limit:
        for variant in _static_variants(frontier.pop()):
            if variant not in seen:
                seen.add(variant)
                frontier.append(variant)
    return frozenset(u for u in seen if "data.nytimes.com" not in u)


def uri_key(iri: str) -> str:
    """Return the strict profile's normal form of an IRI.

    http and https are the same; the path is percent-decoded; ``en.dbpedia.org`` is
    ``dbpedia.org``; a Wikipedia page is the DBpedia resource of the same language; the Wikidata
    pages ``/wiki/Q42`` and ``/wiki/Property:P31`` are the entities ``/entity/Q42`` and
    ``/entity/P31``.

    >>> uri_key("https://en.wikipedia.org/wiki/Gainesville%2C_Florida")
    'http://dbpedia.org/resource/Gainesville,_Florida'
    >>> uri_key("https://www.wikidata.org/wiki/Q42")
    'http://www.wikidata.org/entity/Q42'
    """
    text = iri.strip()
    scheme, separator, rest = text.partition("://")
    if not separator or scheme.lower() not in ("http", "https"):
        return text
    cut = min(
        (i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i >= 0), default=len(rest)
    )
    host, tail = rest[:cut].lower(), rest[cut:]
    if not host:
        return text
    if "%" in tail:
        tail = unquote(tail)
    if host == "en.dbpedia.org":
        host = "dbpedia.org"
    elif host.endswith("wikipedia.org") and tail.startswith("/wiki/"):
        wiki = _WIKIPEDIA_HOST.fullmatch(host)
        if wiki:
            lang = wiki.group(1)
            host = "dbpedia.org" if lang == "en" else f"{lang}.dbpedia.org"
            tail = "/resource/" + tail[len("/wiki/") :].replace(" ", "_")
    elif host in ("wikidata.org", "www.wikidata.org"):
        host = "www.wikidata.org"
        entity = _WIKIDATA_WIKI.fullmatch(tail)
        if entity:
            tail = "/entity/" + entity.group(1)
    return "http://" + host + tail


def _number_key(lexical: str) -> str | None:
    if not _NUMBER.fullmatch(lexical.strip()):
        return None
    try:
        value = Decimal(lexical.strip())
    except InvalidOperation:
        return None
    return "0" if value == 0 else str(value.normalize())


def _date_key(lexical: str) -> str | None:
    match = _DATE.fullmatch(lexical.strip())
    if not match:
        return None
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    try:
        if abs(int(year)) > 9999 or int(year) < 1:
            return f"{int(year)}-{int(month):02d}-{int(day):02d}"
        date = dt.date(int(year), int(month), int(day))
        if hour is None:
            return date.isoformat()
        moment = dt.datetime(
            date.year,
            date.month,
            date.day,
            int(hour),
            int(minute),
            int(second or 0),
            round(float(fraction or 0) * 1_000_000),
        )
    except ValueError:
        return None
    if zone and zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        digits = zone[1:].replace(":", "")
        moment -= sign * dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    if moment.time() == dt.time(0):
        return moment.date().isoformat()
    return moment.isoformat() + "Z"


def literal_key(lexical: str, datatype: str | None = None) -> Key:
    """Return the strict profile's comparison key of a literal (language tags are compared apart).

    Numbers compare by value, dates and midnight dateTimes by their calendar date, other
    dateTimes by their UTC instant, booleans case-insensitively; any other literal by its
    Unicode-normalised (NFC) lexical form. Plain strings that look like numbers, dates or
    booleans are read as such, because QALD files rarely give datatypes.

    >>> literal_key("8") == literal_key("8.0", XSD.decimal.value)
    True
    >>> literal_key("1961-08-04T00:00:00Z") == literal_key("1961-08-04")
    True
    >>> literal_key("True")
    ('bool', 'true')
    """
    plain = datatype is None or datatype in _STRING_TYPES
    text = lexical.strip()
    if datatype == XSD.boolean.value or (plain and text.lower() in ("true", "false")):
        return ("bool", "true" if text.lower() in ("true", "1") else "false")
    if plain or datatype in _NUMERIC_TYPES:
        number = _number_key(text)
        if number is not None:
            return ("num", number)
    if plain or datatype in _DATE_TYPES:
        date = _date_key(text)
        if date is not None:
            return ("date", date)
    return ("str", unicodedata.normalize("NFC", lexical))


def value_key(value: AnswerValue) -> Key:
    """Return the strict comparison key of an answer value.

    IRIs, ``xsd:anyURI`` literals and string literals that are URLs are compared as IRIs (GERBIL
    also turns URL strings into resources); other literals by ``literal_key``.

    >>> from pyoxigraph import Literal
    >>> value_key(Literal("https://dbpedia.org/resource/Berlin")) == value_key(
    ...     NamedNode("http://dbpedia.org/resource/Berlin"))
    True
    """
    if isinstance(value, NamedNode):
        return ("iri", uri_key(value.value))
    if value.datatype == XSD.anyURI or (value.language is None and is_url(value.value)):
        return ("iri", uri_key(value.value))
    return literal_key(value.value, value.datatype.value if value.language is None else None)


def display(value: AnswerValue) -> str:
    """Return a short readable form: an IRI bare, a literal with its tag or non-string datatype.

    >>> from pyoxigraph import Literal
    >>> display(Literal("Paris", language="en")), display(Literal("8", datatype=XSD.integer))
    ('"Paris"@en', '"8"^^<http://www.w3.org/2001/XMLSchema#integer>')
    """
    if isinstance(value, NamedNode):
        return value.value
    if value.language:
        return f'"{value.value}"@{value.language}'
    if value.datatype.value in _STRING_TYPES:
        return value.value
    return f'"{value.value}"^^<{value.datatype.value}>'
