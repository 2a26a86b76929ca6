"""Languages as IRIs of the EU Publications Office's language authority (DCAT-AP's choice).

Benchmark files name languages with BCP 47 tags or ISO 639-1 codes (``en``, ``pt_BR``,
``hi_IN``); DCAT-AP wants ``dct:language`` to be a ``dct:LinguisticSystem`` IRI, and names
the EU language authority (``http://publications.europa.eu/resource/authority/language/ENG``),
whose codes are three letters (ISO 639-2/T and 639-3). ``LANGUAGE_CODES`` is our own table
from the primary subtag of a tag to that code: the 24 official languages of the EU, the other
languages of the QALD, LC-QuAD, BioASQ and TEXT2SPARQL files, and a few widespread ones, each
checked against the authority's list. A tag outside it gets no IRI (``language_iri`` returns
None): the catalog then states only the tag, never a guessed IRI.
"""

from __future__ import annotations

from pyoxigraph import NamedNode

EU_LANGUAGE = "http://publications.europa.eu/resource/authority/language/"

# primary subtag (ISO 639-1, or our "mul") -> code of the EU language authority
LANGUAGE_CODES: dict[str, str] = {
    # the official languages of the European Union
    "bg": "BUL",
    "cs": "CES",
    "da": "DAN",
    "de": "DEU",
    "el": "ELL",
    "en": "ENG",
    "es": "SPA",
    "et": "EST",
    "fi": "FIN",
    "fr": "FRA",
    "ga": "GLE",
    "hr": "HRV",
    "hu": "HUN",
    "it": "ITA",
    "lt": "LIT",
    "lv": "LAV",
    "mt": "MLT",
    "nl": "NLD",
    "pl": "POL",
    "pt": "POR",
    "ro": "RON",
    "sk": "SLK",
    "sl": "SLV",
    "sv": "SWE",
    # other languages of published QA benchmarks (QALD-7 to QALD-10, LC-QuAD, TEXT2SPARQL)
    "be": "BEL",
    "fa": "FAS",
    "hi": "HIN",
    "hy": "HYE",
    "ja": "JPN",
    "ru": "RUS",
    "uk": "UKR",
    "zh": "ZHO",
    # a few more with many speakers or nearby corpora
    "ar": "ARA",
    "ca": "CAT",
    "eu": "EUS",
    "he": "HEB",
    "id": "IND",
    "is": "ISL",
    "ko": "KOR",
    "no": "NOR",
    "tr": "TUR",
    "vi": "VIE",
    # ISO 639-2's "multiple languages" (a task that asks every question in its own language)
    "mul": "MUL",
}


def primary_subtag(tag: str) -> str:
    """Return the language part of a tag as files write it (``_`` or ``-``), lower case.

    >>> primary_subtag("pt_BR"), primary_subtag(" EN-gb "), primary_subtag("hi_IN")
    ('pt', 'en', 'hi')
    """
    return tag.strip().replace("_", "-").split("-", 1)[0].lower()


def language_iri(tag: str) -> NamedNode | None:
    """Return the EU authority's IRI of the language of ``tag`` (None: not in our table).

    >>> language_iri("en").value
    'http://publications.europa.eu/resource/authority/language/ENG'
    >>> language_iri("pt_BR").value.rsplit("/", 1)[-1], language_iri("ba") is None
    ('POR', True)
    """
    code = LANGUAGE_CODES.get(primary_subtag(tag))
    return NamedNode(EU_LANGUAGE + code) if code else None
