"""The built-in catalog of well-known benchmarks and ``fetch``: download, verify, load.

Downloads go only to the catalog's official location or to the configured mirror (a base URL or
a local directory laid out by ``mirror_path``). A file whose SHA-256 differs from the catalog is
refused unless verification is switched off; nothing is written to the store then. An entry
without a checksum (a published file nobody here could verify) is loaded with a warning that
says so and gives the file's SHA-256.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from pathlib import Path

import httpx

from evaluators.datasets.library import LoadOutcome, load_dataset_bytes
from evaluators.errors import FetchError, UnknownDatasetError
from evaluators.formats import DEFAULT_MAX_BYTES
from evaluators.model import SourceFormat
from store.protocol import RdfStore


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    """One well-known benchmark file."""

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
            kb=e["kb"],
            url=e["url"],
            mirror_path=e["mirror_path"],
            sha256=e.get("sha256"),
            size=e.get("size"),
            verified=e.get("verified"),
        )
        for name, e in raw.items()
    }


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
    item: CatalogEntry,
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
    data, origin = download(item, mirror=mirror, timeout=timeout, max_bytes=max_bytes)
    digest = hashlib.sha256(data).hexdigest()
    if verify and item.sha256 and digest != item.sha256:
        raise FetchError(
            f"{item.name}: checksum mismatch for {origin}: expected sha256 {item.sha256}, got "
            f"{digest}. The file changed upstream or the mirror is wrong; use --no-verify to "
            "load it anyway as a new version."
        )
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
    )
    if item.sha256 is None:
        note = (
            f"{item.name}: the catalog has no checksum for this file (nobody could verify the "
            f"published file yet); loaded unverified, sha256 {digest}"
        )
        outcome = replace(outcome, warnings=(note, *outcome.warnings))
    return outcome
