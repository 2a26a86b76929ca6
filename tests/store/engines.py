"""The SPARQL servers `RemoteStore` is tested against, started on loopback for the tests.

* ``oxigraph``: ``oxigraph serve`` from the PyPI package ``oxigraph`` (its executable sits next to
  the test interpreter), one per test: it starts in a fraction of a second.
* ``virtuoso``: Debian's Virtuoso Open Source (``virtuoso-t`` from ``virtuoso-opensource-7-bin``,
  which ``./dev test`` installs), one per test session: its own database in a temporary
  directory, its own ``virtuoso.ini``, SQL and HTTP ports on 127.0.0.1 (never the system
  service). It is set up the way docs/virtuoso.md tells a user to: a ``qabench`` SQL user with
  the ``SPARQL_UPDATE`` role and read/write permission on the quad store, reached with HTTP
  digest authentication at ``/sparql-auth`` and ``/sparql-graph-crud-auth``, and anonymous
  readers denied every graph. Tests share the server, so ``Engine.reset`` empties it first.
"""

from __future__ import annotations

import secrets
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import httpx
import pytest

from store.remote import RemoteStore

VIRTUOSO = "virtuoso-t"
ISQL = "isql-vt"
START_SECONDS = 60.0
# Larger than any result the tests ask for but one, which checks that a cut result is an error.
RESULT_ROWS = 10_000  # Virtuoso's own default


@dataclass(frozen=True, slots=True)
class Engine:
    """The URLs (and credentials) of one running SPARQL server."""

    name: str
    query_url: str
    update_url: str
    store_url: str
    user: str = ""
    password: str = ""
    sql_port: int = 0
    start_seconds: float = 0.0

    def store(self, *, graph_prefix: str = "") -> RemoteStore:
        """Return a ``RemoteStore`` over this server (close it after use)."""
        return RemoteStore(
            self.query_url,
            self.update_url,
            self.store_url,
            user=self.user,
            password=self.password,
            graph_prefix=graph_prefix,
        )

    def reset(self) -> None:
        """Drop every graph but the engine's own."""
        store = self.store()
        try:
            store.drop_graphs(store.graphs())
        finally:
            store.close()

    def sql(self, statements: str) -> str:
        """Run SQL statements as the Virtuoso DBA (``isql-vt``) and return the output.

        Raises:
            AssertionError: if ``isql-vt`` reports an error.
        """
        done = subprocess.run(
            [ISQL, f"127.0.0.1:{self.sql_port}", "dba", "dba", f"exec={statements}"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        output = done.stdout + done.stderr
        assert done.returncode == 0 and "*** Error" not in output, output
        return done.stdout


def free_port() -> int:
    """Return a TCP port that is free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait(process: subprocess.Popen[bytes], url: str, what: str, auth: httpx.Auth | None) -> None:
    deadline = time.monotonic() + START_SECONDS
    while True:
        try:
            answer = httpx.post(url, data={"query": "ASK {}"}, auth=auth, timeout=2)
            if answer.status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline or process.poll() is not None:
            pytest.fail(f"{what} did not start")
        time.sleep(0.1)


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)


@contextmanager
def serving_oxigraph(directory: Path) -> Iterator[Engine]:
    """Serve a new Oxigraph directory on loopback and yield its URLs."""
    binary = shutil.which("oxigraph") or str(Path(sys.executable).parent / "oxigraph")
    port = free_port()
    started = time.monotonic()
    process = subprocess.Popen(
        [binary, "serve", "--location", str(directory), "--bind", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait(process, f"{url}/query", "oxigraph serve", None)
        yield Engine(
            "oxigraph",
            f"{url}/query",
            f"{url}/update",
            f"{url}/store",
            start_seconds=time.monotonic() - started,
        )
    finally:
        _stop(process)


def virtuoso_ini(directory: Path, sql_port: int, http_port: int) -> str:
    """Return a minimal ``virtuoso.ini`` keeping every file in ``directory``, on loopback only."""
    db = directory / "virtuoso"
    return f"""\
[Database]
DatabaseFile = {db}.db
ErrorLogFile = {db}.log
LockFile = {db}.lck
TransactionFile = {db}.trx
xa_persistent_file = {db}.pxa
TempStorage = TempDatabase

[TempDatabase]
DatabaseFile = {db}-temp.db
TransactionFile = {db}-temp.trx

[Parameters]
ServerPort = 127.0.0.1:{sql_port}
DisableUnixSocket = 1
NumberOfBuffers = 10000
MaxDirtyBuffers = 6000
DirsAllowed = {directory}
CheckpointInterval = 60

[HTTPServer]
ServerPort = 127.0.0.1:{http_port}
ServerRoot = {directory}
ServerThreads = 10
MaxClientConnections = 10

[SPARQL]
ResultSetMaxRows = {RESULT_ROWS}
MaxQueryExecutionTime = 60
MaxQueryCostEstimationTime = 400
"""


# What docs/virtuoso.md tells an administrator to run once (isql-vt, as dba).
SETUP_SQL = """\
DB.DBA.USER_CREATE ('qabench', '{password}');
GRANT SPARQL_UPDATE TO "qabench";
DB.DBA.RDF_DEFAULT_USER_PERMS_SET ('nobody', 0);
DB.DBA.RDF_DEFAULT_USER_PERMS_SET ('qabench', 3);
"""


@contextmanager
def serving_virtuoso(directory: Path) -> Iterator[Engine]:
    """Start a new Virtuoso database in ``directory`` on loopback and yield its URLs."""
    if shutil.which(VIRTUOSO) is None or shutil.which(ISQL) is None:
        pytest.fail(
            f"{VIRTUOSO} and {ISQL} not found: `./dev test` installs Debian's "
            "virtuoso-opensource-7-bin"
        )
    directory.mkdir(parents=True, exist_ok=True)
    sql_port, http_port = free_port(), free_port()
    ini = directory / "virtuoso.ini"
    ini.write_text(virtuoso_ini(directory, sql_port, http_port))
    started = time.monotonic()
    process = subprocess.Popen(
        [VIRTUOSO, "-f", "-c", str(ini)],
        cwd=directory,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{http_port}"
    password = secrets.token_urlsafe(16)
    try:
        _wait(process, f"{url}/sparql", "virtuoso-t", None)
        engine = Engine(
            "virtuoso",
            f"{url}/sparql-auth",
            f"{url}/sparql-auth",
            f"{url}/sparql-graph-crud-auth",
            user="qabench",
            password=password,
            sql_port=sql_port,
        )
        engine.sql(SETUP_SQL.format(password=password))
        yield replace(engine, start_seconds=time.monotonic() - started)
    finally:
        _stop(process)
