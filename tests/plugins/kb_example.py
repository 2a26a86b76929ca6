"""A real `oxigraph serve` on loopback holding the example knowledge base (server/examples)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.plugins.kb import serving_oxigraph

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "server" / "examples"


@pytest.fixture
def example_endpoint(tmp_path: Path) -> Iterator[str]:
    """Yield the query URL of a real `oxigraph serve` holding the example knowledge base."""
    with serving_oxigraph([EXAMPLES / "example-kb.ttl"], tmp_path / "oxigraph") as url:
        yield url
