"""The test suite; its folders mirror the packages (``tests/server/sparql`` tests ``server.sparql``).

The paths every test may need are defined once, here.
"""

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TEST_DATA = REPO / "tests" / "data"
EXAMPLES = REPO / "server" / "examples"
