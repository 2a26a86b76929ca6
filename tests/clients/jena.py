"""The command line of Debian's Jena (``libapache-jena-java``), as the client tests and
``bench/clients_whole.py`` run it.

Debian's jena-core moves Xerces' classes to another package but not its message files; without
them Jena stops at start-up, so they are copied where the classes look.
"""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

JENA_JARS = Path("/usr/share/java")
# Debian's jena jars and the libraries they need (slf4j-simple: problems go to stderr).
JENA_CLASSPATH = [
    "jena-arq",
    "jena-base",
    "jena-cmds",
    "jena-core",
    "jena-dboe-base",
    "jena-dboe-index",
    "jena-dboe-storage",
    "jena-dboe-trans-data",
    "jena-dboe-transaction",
    "jena-iri",
    "jena-rdfconnection",
    "jena-shacl",
    "jena-shex",
    "jena-tdb",
    "jena-tdb2",
    "commons-cli",
    "commons-codec",
    "commons-compress",
    "commons-csv",
    "commons-io",
    "commons-lang3",
    "dexx.collection",
    "gson",
    "guava",
    "httpclient",
    "httpclient-cache",
    "httpcore",
    "jackson-annotations",
    "jackson-core",
    "jackson-databind",
    "jakarta.json-api",
    "jsonld-java",
    "protobuf",
    "slf4j-api",
    "slf4j-simple",
    "thrift",
    "titanium-json-ld",
]


def jena_command(work: Path) -> list[str] | None:
    """Return ``java -cp …`` for Jena's commands (None when Java or Jena is not installed).

    Args:
        work: an empty directory for the message files put back.
    """
    if shutil.which("java") is None or not (JENA_JARS / "jena-cmds.jar").exists():
        return None
    with zipfile.ZipFile(JENA_JARS / "jena-core.jar") as jar:
        for name in jar.namelist():
            prefix = "org/apache/jena/ext/xerces/"
            if name.startswith(prefix) and name.endswith(".properties"):
                target = work / "xerces" / name[len(prefix) :]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(jar.read(name))
    classpath = [str(work), *(str(JENA_JARS / f"{jar}.jar") for jar in JENA_CLASSPATH)]
    return ["java", "-Xshare:auto", "-cp", ":".join(classpath)]
