"""The built-in catalog of well-known benchmarks and ``fetch``: download, verify, load.

Downloads go only to the catalog's official location or to the configured mirror (a base URL or
a local directory laid out by ``mirror_path``). A file whose SHA-256 differs from the catalog is
refused unless verification is switched off; nothing is written to the store then. An entry
without a checksum (a published file nobody here could verify) is loaded with a warning that
says so and gives the file's SHA-256.
"""

from __future__ import annotations

import hashlib
import tempfile
import tomllib
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from pathlib import Path

import httpx

from evaluators.datasets.library import LoadOutcome, load_dataset_bytes, store_dataset
from evaluators.errors import FetchError, UnknownDatasetError
from evaluators.formats import DEFAULT_MAX_BYTES, parse_bytes
from evaluators.formats.mirage.benchmark import select as select_part
from evaluators.formats.sciqa.gold import with_gold
from evaluators.formats.text2sparql.gold import with_gold_results
from evaluators.knowledge.bases import load_kb
from evaluators.knowledge.execution import open_executor
from evaluators.knowledge.reference import reference_differences
from evaluators.model import ParseWarning, SourceFormat
from store.protocol import RdfStore


@dataclass(frozen=True, slots=True)
class CatalogFile:
    """A file that comes with an entry (a TEXT2SPARQL result set, a knowledge-graph file)."""

    name: str
    url: str
    mirror_path: str
    sha256: str | None = None
    size: int | None = None


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    """One well-known benchmark file (and, for TEXT2SPARQL, its gold results and graph)."""

    name: str
    title: str
    format: SourceFormat
    split: str
    kb: str
    url: str
    mirror_path: str
    sha256: str | None = None
    size: int | None = None
    verified: str | None = None  # repository@commit the checksum was computed from, if not shared
    gold_results: CatalogFile | None = None
    kb_files: tuple[CatalogFile, ...] = ()
    release_of: str | None = None  # an earlier release of this entry's file
    served: str | None = None  # "start/end" (ISO dates) it was current in its repository
    gerbil: str | None = None  # "start/end" GERBIL QA served it as a built-in dataset
    published: str | None = None  # the published numbers computed on it
    # issue 39: the part of a file that gathers several datasets (MIRAGE), the licence(s) as
    # stated by the sources, and the licence's IRI where one licence covers the whole file
    part: str | None = None
    license: str | None = None
    license_iri: str | None = None

    @property
    def checked(self) -> bool:
        """Whether the catalog has a checksum a download is verified against."""
        return self.sha256 is not None


@cache
def catalog() -> dict[str, CatalogEntry]:
    """Return the built-in catalog keyed by name."""
    raw = tomllib.loads(
        resources.files("evaluators.datasets").joinpath("catalog.toml").read_text("utf-8")
    )
    return {
        name: CatalogEntry(
            name=name,
            title=e["title"],
            format=SourceFormat(e["format"]),
            split=e["split"],
            kb=e.get("kb", ""),
            url=e["url"],
            mirror_path=e["mirror_path"],
            sha256=e.get("sha256"),
            size=e.get("size"),
            verified=e.get("verified"),
            gold_results=_file(name, e["gold_results"]) if "gold_results" in e else None,
            kb_files=tuple(_file(name, f) for f in e.get("kb_files", ())),
            release_of=e.get("release_of"),
            served=e.get("served"),
            gerbil=e.get("gerbil"),
            published=e.get("published"),
            part=e.get("part"),
            license=e.get("license"),
            license_iri=e.get("license_iri"),
        )
        for name, e in raw.items()
    }


def recognise(data: bytes) -> CatalogEntry | None:
    """Return the catalog entry whose file these bytes are (by SHA-256, never by file name),
    the current entry before an earlier release with the same checksum; None for an unknown
    file.

    >>> recognise(b"not a benchmark") is None
    True
    """
    digest = hashlib.sha256(data).hexdigest()
    known = [e for e in catalog().values() if e.sha256 == digest]
    known.sort(key=lambda e: e.release_of is not None)
    return known[0] if known else None


def load_upload(
    store: RdfStore,
    base: str,
    data: bytes,
    *,
    source: str,
    name: str | None = None,
    title: str | None = None,
    new_version: bool = False,
) -> tuple[LoadOutcome, CatalogEntry | None]:
    """Store uploaded bytes as a dataset version; a known benchmark file (``recognise``) gets
    its catalog name (unless ``name`` says otherwise), title, split and knowledge base, and
    records the catalog entry it is.

    Raises:
        DatasetFormatError: if the data cannot be parsed; the store is unchanged.
        DatasetNameConflictError: as ``library.load_dataset``.
    """
    known = recognise(data)
    outcome = load_dataset_bytes(
        store,
        base,
        data,
        source=source,
        name=name or (known.name if known else None),
        format=known.format if known else None,
        knowledge_base=known.kb if known else None,
        title=title or (known.title if known else None),
        catalog_name=known.name if known else None,
        split=known.split if known else None,
        new_version=new_version,
    )
    return outcome, known


def _file(name: str, raw: dict[str, object]) -> CatalogFile:
    size = raw.get("size")
    sha = raw.get("sha256")
    return CatalogFile(
        name,
        str(raw["url"]),
        str(raw["mirror_path"]),
        str(sha) if sha is not None else None,
        int(size) if isinstance(size, int) else None,
    )


def releases(name: str) -> list[CatalogEntry]:
    """Return every release of a catalog file, oldest first (today's last).

    >>> [e.name for e in releases("qald-8-test-multilingual")]
    ['qald-8-test-multilingual-47', 'qald-8-test-multilingual']
    """
    current = entry(name)
    base = current.release_of or current.name
    found = [e for e in catalog().values() if base in (e.name, e.release_of)]
    return sorted(found, key=lambda e: ((e.served or "9999").split("/")[0], e.release_of is None))


def served_on(name: str, day: str) -> CatalogEntry | None:
    """Return the release of a catalog file its repository served on ``day`` (ISO date).

    >>> served_on("qald-8-test-multilingual", "2017-10-22").name
    'qald-8-test-multilingual-47'
    """
    for item in releases(name):
        start, _, end = (item.served or "/").partition("/")
        if start and start <= day and (not end or day < end):
            return item
    return None


def entry(name: str) -> CatalogEntry:
    """Return one catalog entry.

    Raises:
        UnknownDatasetError: if the catalog has no such name (the message lists the names).
    """
    try:
        return catalog()[name]
    except KeyError:
        names = ", ".join(sorted(catalog()))
        raise UnknownDatasetError(f"No catalog entry {name!r}; known: {names}") from None


def download(
    item: CatalogEntry | CatalogFile,
    *,
    mirror: str = "",
    timeout: float = 60.0,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> tuple[bytes, str]:
    """Return the file's bytes and where they came from (mirror or official URL).

    Raises:
        FetchError: on HTTP errors, timeouts, missing mirror files or oversized downloads.
    """
    if mirror and not mirror.startswith(("http://", "https://")):
        path = Path(mirror).expanduser() / item.mirror_path
        if not path.is_file():
            raise FetchError(f"{item.name}: mirror directory has no {item.mirror_path} ({path})")
        if path.stat().st_size > max_bytes:
            raise FetchError(f"{item.name}: {path} is larger than {max_bytes} bytes")
        return path.read_bytes(), str(path)
    url = f"{mirror.rstrip('/')}/{item.mirror_path}" if mirror else item.url
    try:
        with httpx.stream("GET", url, timeout=timeout, follow_redirects=True) as response:
            if response.status_code != 200:
                raise FetchError(f"{item.name}: GET {url} answered HTTP {response.status_code}")
            chunks: list[bytes] = []
            total = 0
            for chunk in response.iter_bytes():
                total += len(chunk)
                if total > max_bytes:
                    raise FetchError(f"{item.name}: {url} is larger than {max_bytes} bytes")
                chunks.append(chunk)
    except httpx.HTTPError as exc:
        raise FetchError(f"{item.name}: cannot download {url}: {exc}") from exc
    return b"".join(chunks), url


def fetch(
    store: RdfStore,
    base: str,
    name: str,
    *,
    mirror: str = "",
    verify: bool = True,
    timeout: float = 60.0,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> LoadOutcome:
    """Download a catalog dataset, verify its checksum and load it as a version.

    Raises:
        UnknownDatasetError: for a name not in the catalog.
        FetchError: if the download fails or the checksum differs (with ``verify``).
        DatasetFormatError: if the file does not parse; the store is unchanged.
    """
    item = entry(name)
    data, origin, digest = _verified(item, mirror, verify, timeout, max_bytes)
    if item.format is SourceFormat.TEXT2SPARQL:
        outcome = _fetch_text2sparql(store, base, item, data, origin, mirror, verify, timeout,
                                     max_bytes)  # fmt: skip
        return outcome
    if item.part is not None:
        return _unverified_note(_fetch_part(store, base, item, data, origin), item, digest)
    if item.gold_results is not None:
        gold, _, _ = _verified(item.gold_results, mirror, verify, timeout, max_bytes)
        outcome = _fetch_with_gold(store, base, item, data, origin, gold)
        return _unverified_note(outcome, item, digest)
    outcome = load_dataset_bytes(
        store,
        base,
        data,
        source=origin,
        name=item.name,
        format=item.format,
        knowledge_base=item.kb,
        title=item.title,
        catalog_name=item.name,
        split=item.split,
        # the catalog names the dataset: a changed file (--no-verify) is its next version
        new_version=True,
        license=item.license_iri,
    )
    return _unverified_note(outcome, item, digest)


def _fetch_with_gold(
    store: RdfStore, base: str, item: CatalogEntry, data: bytes, origin: str, gold: bytes
) -> LoadOutcome:
    """Load a SciQA questions file with its gold file (both already verified)."""
    questions = parse_bytes(data, source=origin, format=item.format)
    source = item.gold_results.mirror_path if item.gold_results else "gold"
    return store_dataset(
        store,
        base,
        with_gold(questions, gold, source=source),
        data + gold,
        name=item.name,
        source=origin,
        knowledge_base=item.kb or None,
        title=item.title,
        catalog_name=item.name,
        split=item.split,
        new_version=True,
        license=item.license_iri,
    )


def _fetch_part(
    store: RdfStore, base: str, item: CatalogEntry, data: bytes, origin: str
) -> LoadOutcome:
    """Load one part of a file that gathers several datasets (one of MIRAGE's five)."""
    whole = parse_bytes(data, source=origin, format=item.format)
    dataset = select_part(whole, (item.part or "",))
    if not dataset.questions:
        raise FetchError(f"{item.name}: the file has no questions of part {item.part!r}")
    return store_dataset(
        store,
        base,
        dataset,
        data,
        name=item.name,
        source=origin,
        knowledge_base=item.kb or None,
        title=item.title,
        catalog_name=item.name,
        split=item.split,
        new_version=True,
        license=item.license_iri,
    )


def _unverified_note(outcome: LoadOutcome, item: CatalogEntry, digest: str) -> LoadOutcome:
    if item.sha256 is None:
        note = (
            f"{item.name}: the catalog has no checksum for this file (nobody could verify the "
            f"published file yet); loaded unverified, sha256 {digest}"
        )
        outcome = replace(outcome, warnings=(note, *outcome.warnings))
    return outcome


def _verified(
    item: CatalogEntry | CatalogFile, mirror: str, verify: bool, timeout: float, max_bytes: int
) -> tuple[bytes, str, str]:
    """Download one file and check its SHA-256 (``FetchError`` on a mismatch)."""
    data, origin = download(item, mirror=mirror, timeout=timeout, max_bytes=max_bytes)
    digest = hashlib.sha256(data).hexdigest()
    if verify and item.sha256 and digest != item.sha256:
        raise FetchError(
            f"{item.name}: checksum mismatch for {origin}: expected sha256 {item.sha256}, got "
            f"{digest}. The file changed upstream or the mirror is wrong; use --no-verify to "
            "load it anyway as a new version."
        )
    return data, origin, digest


def _fetch_text2sparql(
    store: RdfStore,
    base: str,
    item: CatalogEntry,
    data: bytes,
    origin: str,
    mirror: str,
    verify: bool,
    timeout: float,
    max_bytes: int,
) -> LoadOutcome:
    """Load a TEXT2SPARQL entry: its graph as knowledge base ``kb``, then the questions with
    the reference result set as gold (every file verified before anything is stored)."""
    if item.gold_results is None:
        raise FetchError(f"{item.name}: the catalog names no reference result set")
    results, _, _ = _verified(item.gold_results, mirror, verify, timeout, max_bytes)
    graph = [_verified(f, mirror, verify, timeout, max_bytes)[0] for f in item.kb_files]
    questions = parse_bytes(data, source=origin, format=SourceFormat.TEXT2SPARQL)
    reference = parse_bytes(results, source=item.gold_results.mirror_path)
    dataset = with_gold_results(questions, reference, source=item.gold_results.mirror_path)
    differences: dict[str, str] = {}
    if graph:
        with tempfile.TemporaryDirectory(prefix="qabench-kb-") as folder:
            paths = []
            for file, content in zip(item.kb_files, graph, strict=True):
                path = Path(folder) / Path(file.mirror_path).name
                path.write_bytes(content)
                paths.append(path)
            load_kb(store, base, paths, item.kb)
        differences = reference_differences(dataset, open_executor(store, base, item.kb))
    notes = tuple(ParseWarning(text, qid) for qid, text in differences.items())
    return store_dataset(
        store,
        base,
        replace(dataset, warnings=(*dataset.warnings, *notes)),
        data + results,
        name=item.name,
        source=origin,
        knowledge_base=item.kb,
        title=item.title,
        catalog_name=item.name,
        new_version=True,
    )
