"""A local copy of a public repository that the reproduction scripts and tests read.

The full files of SciQA/FIRESPARQL and MIRAGE are not in ``../shared/data`` and never in this
repository (licences, size). The reproductions read them from a snapshot of the repository
instead: a checkout (any directory holding its files), or a bare git directory, whose
``HEAD`` is then exported once (``git archive``) into a scratch directory. Where snapshots
live: the ``--snapshots`` option, else the environment variable ``QABENCH_SNAPSHOTS``, else a
``.mirror`` folder beside or above this repository; below it, a repository ``owner/name`` is
``owner+name/repo`` (a bare git directory) or ``owner_name`` (a checkout, the layout of
``../shared/data``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# the tests' ``snapshot`` fixture: ("owner/name", path, ...) -> a checkout holding the paths
Snapshot = Callable[..., Path]


def snapshots_root(given: str | None = None) -> Path | None:
    """Return the folder that holds repository snapshots, or ``None`` if there is none."""
    if given:
        return Path(given)
    if os.environ.get("QABENCH_SNAPSHOTS"):
        return Path(os.environ["QABENCH_SNAPSHOTS"])
    for folder in (REPO.parent, REPO.parent.parent):
        if (folder / ".mirror").is_dir():
            return folder / ".mirror"
    return None


def _is_bare(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir()


def find(repository: str, root: Path | None) -> Path | None:
    """Return the snapshot of ``owner/name`` below ``root`` (bare or checkout), if any."""
    if root is None:
        return None
    owner, _, name = repository.partition("/")
    for candidate in (root / f"{owner}+{name}" / "repo", root / f"{owner}_{name}"):
        if candidate.is_dir():
            return candidate
    return None


def checkout(source: Path, paths: tuple[str, ...], scratch: Path | None = None) -> Path:
    """Return a directory holding ``paths`` of the snapshot ``source``.

    A checkout is returned as it is; from a bare git directory the files of ``HEAD`` below
    ``paths`` are written below ``scratch`` (a new temporary directory by default). A stored
    snapshot may lack its largest files (their blobs are absent): those are left out.

    Raises:
        FileNotFoundError: the snapshot lacks one of ``paths`` or git is missing.
    """
    if not _is_bare(source):
        missing = [p for p in paths if not (source / p).exists()]
        if missing:
            raise FileNotFoundError(f"{source} has no {', '.join(missing)}")
        return source
    git = shutil.which("git")
    if git is None:
        raise FileNotFoundError("git is needed to read a bare snapshot")
    target = Path(tempfile.mkdtemp(prefix="qabench-snapshot-", dir=scratch))
    listing = subprocess.run(
        [git, f"--git-dir={source}", "ls-tree", "-r", "-z", "HEAD", "--", *paths],
        check=True,
        capture_output=True,
    ).stdout
    files: list[tuple[str, str]] = []
    for entry in listing.split(b"\0"):
        if entry:
            meta, _, name = entry.partition(b"\t")
            _mode, kind, blob = meta.split()
            if kind == b"blob":
                files.append((blob.decode(), name.decode()))
    if not files:
        raise FileNotFoundError(f"{source} has no {', '.join(paths)}")
    batch = subprocess.run(
        [git, f"--git-dir={source}", "cat-file", "--batch"],
        input="".join(f"{blob}\n" for blob, _ in files).encode(),
        check=True,
        capture_output=True,
    ).stdout
    at = 0
    for _, name in files:
        end = batch.index(b"\n", at)
        header = batch[at:end].split()
        at = end + 1
        if header[-1] == b"missing":
            continue
        size = int(header[2])
        path = target / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(batch[at : at + size])
        at += size + 1
    return target
