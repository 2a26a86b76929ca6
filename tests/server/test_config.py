"""Configuration: the shipped file loads, bad input is refused clearly, the README documents it."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.config import ConfigError, config_fields, config_from_dict, load_config
from tests import REPO


def test_shipped_config_loads() -> None:
    config = load_config()
    assert config.server.host == "127.0.0.1"
    assert config.store_path == (REPO / "data" / "store").resolve()


def test_every_config_key_is_documented_in_the_readme() -> None:
    readme = (REPO / "README.md").read_text("utf-8")
    keys = config_fields()
    assert len(keys) > 30
    missing = [k for k in keys if f"`{k}`" not in readme]
    assert not missing, f"README lacks: {missing}"


# Every setting that bounds a request, a client or the server (docs/server.md, "Limits").
LIMITS = (
    "server.threads",
    "server.max_upload_bytes",
    "datasets.max_file_bytes",
    "server.max_query_length",
    "server.max_query_nesting",
    "server.sparql_requests_per_minute",
    "server.queries_per_client",
    "server.query_workers",
    "server.sparql_client_budget_seconds",
    "server.sparql_queue",
    "server.query_timeout_seconds",
    "server.query_memory_mb",
    "server.max_result_rows",
    "server.max_result_bytes",
    "server.rag_requests_per_minute",
    "rag.workers",
    "rag.queue",
    "rag.max_question_chars",
    "rag.generator_timeout_seconds",
    "rag.open_generators",
    "server.page_size",
    "server.layout_wait_seconds",
    "server.sitemap_page_size",
    "evaluation.request_timeout_seconds",
    "evaluation.max_response_bytes",
    "evaluation.concurrency_per_system",
    "evaluation.parallel_tasks",
    "store.remote_timeout_seconds",
    "datasets.download_timeout_seconds",
)


def test_every_limit_is_in_the_limits_table_of_the_server_docs() -> None:
    docs = (REPO / "docs" / "server.md").read_text("utf-8")
    table = docs[docs.index("## Limits") : docs.index("## Safety notes")]
    assert set(LIMITS) <= set(config_fields()), set(LIMITS) - set(config_fields())
    missing = [k for k in LIMITS if f"`{k}`" not in table]
    assert len(LIMITS) == 29 and not missing, missing


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"server": {"prot": 1}}, "server.prot: unknown key"),
        ({"server": {"port": "80"}}, "server.port: expected an integer"),
        ({"server": {"port": 70000}}, "server.port: expected a value between"),
        ({"server": {"demo": 1}}, "server.demo: expected true or false"),
        ({"evaluation": {"default_profile": "lenient"}}, "expected one of strict"),
        ({"nonsense": {}}, "unknown table [nonsense]"),
        ({"store": {"data_dir": 5}}, "store.data_dir: expected a path string"),
        ({"server": {"query_memory_mb": 100}}, "expected 0 (no limit) or at least 512"),
    ],
)
def test_bad_config_is_refused_with_the_key_and_the_value(raw: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=None) as info:
        config_from_dict(raw, source=REPO / "config.toml")
    assert message in str(info.value)


def test_relative_paths_resolve_against_the_config_file(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('[store]\ndata_dir = "here"\n')
    assert load_config(cfg).store.data_dir == tmp_path / "here"


def test_data_dir_override_wins(tmp_path: Path) -> None:
    config = load_config(data_dir=tmp_path / "x")
    assert config.store_path == tmp_path / "x" / "store"
    assert config.index_dir == tmp_path / "x" / "index"


def test_missing_or_broken_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[server\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(bad)


def test_the_default_profile_and_limits_are_what_the_evaluators_use() -> None:
    # A profile equal to the default is not looked up (the profiles load the scorers): the
    # default must be one of them.
    from evaluators.defaults import RunLimits
    from evaluators.qa.profiles import PROFILES
    from server.config import EvaluationConfig

    assert EvaluationConfig().default_profile in PROFILES
    limits = RunLimits()
    assert EvaluationConfig().request_timeout_seconds == limits.request_timeout_seconds
    assert EvaluationConfig().text2sparql_retries == limits.text2sparql_retries


def test_a_command_that_opens_the_store_loads_neither_the_web_application_nor_the_scorers(
    tmp_path: Path,
) -> None:
    # Issue 41: ``kb load`` spent about 1 s (3 s on a busy host) importing the web application
    # (to open the store) and the experiment runner and scorers (for the config's defaults).
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from server.cli import main\n"
        f"status = main(['--data-dir', {str(tmp_path)!r}, 'kb', 'list'])\n"
        "loaded = [m for m in ('server.app', 'evaluators.experiments.run_systems',\n"
        "          'evaluators.qa.profiles', 'evaluators.knowledge.execution', 'flask')\n"
        "          if m in sys.modules]\n"
        "print(status, loaded)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.stdout.strip().splitlines()[-1] == "0 []", (done.stdout, done.stderr[-2000:])
