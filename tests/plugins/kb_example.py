"""A real `oxigraph serve` on loopback holding the example knowledge base (server/examples)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import EXAMPLES
from tests.plugins.kb import serving_oxigraph


@pytest.fixture
def example_endpoint(tmp_path: Path) -> Iterator[str]:
    """Yield the query URL of a real `oxigraph serve` holding the example knowledge base."""
    with serving_oxigraph([EXAMPLES / "example-kb.ttl"], tmp_path / "oxigraph") as url:
        yield url
