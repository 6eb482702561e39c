"""Configuration: a TOML file, then environment variables (which win), then defaults.

```toml
[server]
host = "127.0.0.1"
port = 8321
max_body_bytes = 33554432

[database]
url = "sqlite:///data/agentloom.db"     # or postgresql://user@host:5432/db

[engine]
max_model_calls = 10

[[providers]]
name = "vllm"
type = "openai_compatible"
base_url = "http://127.0.0.1:8000/v1"
api_key_env = "VLLM_API_KEY"           # or api_key = "..."
models = ["Qwen/Qwen3-8B"]             # omit to discover from GET /models
token_count = "auto"                   # or "tokenize", "usage", "estimate"

[[models]]                             # one id served by several deployments
id = "chat"
deployments = [{ provider = "vllm", model = "Qwen/Qwen3-8B" }]
fallbacks = []                         # other model ids, tried when every deployment failed
cooldown = 30                          # seconds a failing deployment is left out
```
"""

from __future__ import annotations

import os
import tomllib
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import (
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

from agentloom.api.limits import RequestLimits
from agentloom.config_auth import AuthSettings as AuthSettings
from agentloom.config_auth import JwtAlgorithm as JwtAlgorithm
from agentloom.config_auth import JwtSettings as JwtSettings
from agentloom.config_auth import OidcSettings as OidcSettings
from agentloom.config_base import StrictSettings as _Strict
from agentloom.inference.base import ProviderConfig, TokenCountSetting
from agentloom.inference.deadlines import StreamDeadlines
from agentloom.inference.router import DEFAULT_COOLDOWN, Deployment, RouteConfig, RouteKind
from agentloom.safety.settings import SafetySettings
from agentloom.sealing import SealingKey

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8321
DEFAULT_DATA_DIR = "data"


class ConfigError(ValueError):
    """The configuration file or environment is invalid."""


class ServerSettings(_Strict):
    host: str = DEFAULT_HOST
    port: int = Field(default=DEFAULT_PORT, ge=0, le=65535)
    max_body_bytes: int = Field(default=32 * 1024 * 1024, ge=1024)
    workers: int = Field(default=1, ge=1, le=64)
    instance_id: str = Field(default_factory=lambda: f"inst_{uuid.uuid4().hex}")
    heartbeat_interval: float = Field(default=10.0, gt=0)
    abandoned_after: float = Field(default=60.0, gt=0)
    websocket_max_age: float = Field(default=3600.0, gt=0)  # seconds a WebSocket stays open
    # What a slow client may hold (server/connections.py): seconds for a request's head, without
    # a byte of its body, for all of its body; idle keep-alive seconds; connections a process
    # keeps open (past it: a 503 and closed)
    header_timeout: float = Field(default=10.0, gt=0)
    body_idle_timeout: float = Field(default=30.0, gt=0)
    body_timeout: float = Field(default=600.0, gt=0)
    keep_alive_timeout: float = Field(default=5.0, gt=0)
    max_connections: int = Field(default=1000, ge=1)
    usage_flush_interval: float = Field(default=1.0, gt=0)  # seconds between usage writes
    metrics: bool = True  # GET /metrics and the counting behind it (docs/metrics.md)
    # Seals content handed to clients (compaction items, encrypted reasoning); default: a key
    # kept in the database. Old keys (a rotation) only open what they sealed before.
    sealing_key: SecretStr | None = None
    sealing_old_keys: list[SecretStr] = Field(default_factory=list)

    @field_validator("sealing_key")
    @classmethod
    def _valid_key(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None:
            SealingKey.from_text(value.get_secret_value())  # raises a ValueError naming the problem
        return value

    @field_validator("sealing_old_keys", mode="before")
    @classmethod
    def _split_old_keys(cls, value: object) -> object:
        """The environment gives old keys as one comma-separated string."""
        if isinstance(value, str):
            return [k.strip() for k in value.split(",") if k.strip()]
        return value

    @field_validator("sealing_old_keys")
    @classmethod
    def _valid_old_keys(cls, value: list[SecretStr]) -> list[SecretStr]:
        for key in value:
            SealingKey.from_text(key.get_secret_value())
        return value


class JobPools(_Strict):
    """``[jobs.pools]``: each kind of job has its own slots in a process, so that one kind held up
    (stuck background responses) does not keep the others waiting. A field is a job kind; unset,
    its pool is ``[jobs] concurrency`` (ingest: ``[vector_stores] ingestion_concurrency``)."""

    response: int | None = Field(default=None, ge=1, le=256)  # background responses
    webhook: int | None = Field(default=None, ge=1, le=256)  # webhook deliveries
    ingest: int | None = Field(default=None, ge=1, le=256)  # vector store files to ingest
    agent_run: int | None = Field(default=None, ge=1, le=256)  # managed agents' runs
    agent_tick: int | None = Field(default=None, ge=1, le=256)  # managed agents' scheduled ticks
    retention: int | None = Field(default=None, ge=1, le=256)  # [retention]'s sweep (unset: 1)
    batch: int | None = Field(default=None, ge=1, le=256)  # /v1/batches' batches

    def size(self, kind: str) -> int | None:
        """The pool set for ``kind`` (``None``: not set, or not a kind named here)."""
        return self.model_dump().get(kind)


class JobSettings(_Strict):
    """``[jobs]``: background work, run by every server process from one durable queue."""

    concurrency: int = Field(default=4, ge=1, le=256)  # jobs of each kind one process runs at once
    pools: JobPools = Field(default_factory=JobPools)  # per kind, in place of ``concurrency``
    lease_seconds: float = Field(default=30.0, gt=1)  # a silent process's jobs are taken over after
    max_queued: int = Field(default=10_000, ge=1)  # queued jobs past which a create is a 429
    drain_seconds: float = Field(default=10.0, ge=0)  # on shutdown, to finish before handing back
    max_attempts: int = Field(default=3, ge=1)  # runs of one job before it fails
    poll_seconds: float = Field(default=1.0, gt=0)  # between claims when nothing wakes the runner

    def pool(self, kind: str, default: int | None = None) -> int:
        """How many jobs of ``kind`` one process runs at once: its ``[jobs.pools]`` entry, else
        ``default`` (a kind's own older setting), else ``concurrency``."""
        return self.pools.size(kind) or default or self.concurrency


DAY = 86_400.0  # seconds
# the names embedding models go by (fnmatch, any case): OpenAI's text-embedding-*, nomic-embed,
# mxbai-embed, Qwen3-Embedding, BAAI/bge-*, intfloat/e5-*, thenlper/gte-*, *MiniLM*
EMBEDDING_PATTERNS = (
    "*embed*",
    "*bge-*",
    "e5-*",
    "*/e5-*",
    "*multilingual-e5*",
    "gte-*",
    "*/gte-*",
    "*minilm*",
)


class BatchSettings(_Strict):
    """``[batches]``: the Batch API (``/v1/batches``). A batch runs as one job (``[jobs.pools]
    batch`` of them at once in a process), ``requests`` of its requests at once; a project has
    at most ``per_project`` batches running at once, every process counted (the others wait
    their turn in the queue). ``window`` is how long a batch's ``completion_window`` of "24h"
    gives it before it expires."""

    requests: int = Field(default=4, ge=1, le=256)  # requests of one batch running at once
    per_project: int = Field(default=2, ge=1, le=1000)  # batches of a project running at once
    max_requests: int = Field(default=50_000, ge=1)  # requests in one input file, at most
    window: float = Field(default=DAY, gt=0)  # seconds "24h" stands for


class RetentionSettings(_Strict):
    """``[retention]``: how long finished things are kept, in seconds (0: forever). A sweep
    (:mod:`agentloom.services.jobs.retention`) deletes what is older, ``every`` seconds, in one
    process at a time, ``batch_size`` rows a statement. What is still going (a queued or
    in-progress response or job, a pending delivery) is never deleted."""

    every: float = Field(default=3600.0, ge=1)  # seconds between sweeps
    batch_size: int = Field(default=500, ge=1, le=10_000)  # rows deleted per statement
    responses: float = Field(default=0.0, ge=0)  # stored responses, with their items and events
    response_events: float = Field(default=7 * DAY, ge=0)  # stream events of ended responses
    jobs: float = Field(default=7 * DAY, ge=0)  # jobs that ended
    webhook_deliveries: float = Field(default=30 * DAY, ge=0)  # delivered or failed
    audit_logs: float = Field(default=0.0, ge=0)  # the admin audit log
    request_log: float = Field(default=30 * DAY, ge=0)  # the request log's rows

    def age(self, kind: str) -> float:
        """How long rows of ``kind`` (a field here) are kept, in seconds; 0: forever."""
        return float(self.model_dump()[kind])


class DatabaseSettings(_Strict):
    url: str = f"sqlite:///{DEFAULT_DATA_DIR}/agentloom.db"
    pool_size: int = Field(default=20, ge=1, le=1000)  # PostgreSQL connections kept per pool


class EngineSettings(_Strict):
    max_model_calls: int = Field(default=10, ge=1, le=1000)
    truncation_retries: int = Field(default=4, ge=0, le=20)
    compaction_max_tokens: int = Field(default=2048, ge=64, le=65536)
    # seconds from a stored response's start to its in_progress row (one ending sooner is
    # written once, at its end)
    in_progress_after: float = Field(default=0.05, gt=0)


class EmbeddingSettings(_Strict):
    """How text is embedded for vector search (`[embeddings]`)."""

    type: Literal["minilm", "openai_compatible"] = "minilm"
    # minilm: "auto" = onnxruntime when installed, else numpy; "int8" (onnx only) is faster
    # and approximate (cosine ~0.99 to the reference vectors); precision "auto" = int8 for
    # vector stores where onnxruntime runs (they never show their vectors; search as well),
    # float32 for /v1/embeddings (the reference vectors)
    runtime: Literal["auto", "onnx", "numpy"] = "auto"
    precision: Literal["auto", "fp32", "int8"] = "auto"
    cache_directory: Path | None = None  # minilm on onnx: converted models; ~/.cache/agentloom
    base_url: str | None = None  # openai_compatible: e.g. "http://127.0.0.1:8000/v1"
    model: str | None = None  # openai_compatible: the upstream model name
    api_key: SecretStr | None = None
    api_key_env: str | None = None
    dimensions: int | None = Field(default=None, ge=1, le=65536)
    batch_size: int = Field(default=128, ge=1, le=4096)
    timeout: float = Field(default=60.0, gt=0)
    max_concurrency: int = Field(default=4, ge=1, le=64)  # batches in flight per embed call
    max_retries: int = Field(default=4, ge=0, le=20)  # of a 429, 5xx, timeout or lost connection
    retry_base_delay: float = Field(default=0.5, ge=0)  # seconds; doubled each retry, jittered
    retry_max_delay: float = Field(default=30.0, ge=0)  # cap on a wait, retry-after included

    @model_validator(mode="after")
    def _remote_needs_endpoint(self) -> EmbeddingSettings:
        if self.type == "openai_compatible" and (not self.base_url or not self.model):
            raise ValueError("embeddings type 'openai_compatible' needs base_url and model")
        if self.precision == "int8" and self.runtime == "numpy":
            raise ValueError("embeddings precision 'int8' needs runtime 'onnx' (or 'auto')")
        return self

    def resolved_api_key(self, env: Mapping[str, str] | None = None) -> str | None:
        if self.api_key is not None:
            return self.api_key.get_secret_value()
        if self.api_key_env is None:
            return None
        return (os.environ if env is None else env).get(self.api_key_env)


class FilesSettings(_Strict):
    """Uploaded files (`[files]`): where their bytes live and how large one may be."""

    directory: Path = Path(DEFAULT_DATA_DIR) / "files"
    max_bytes: int = Field(default=512 * 1024 * 1024, ge=1)
    blob_store: Literal["local"] = "local"


class CodeInterpreterSettings(_Strict):
    """The code_interpreter tool (`[code_interpreter]`): its sandbox and limits.

    ``sandbox = "bwrap"`` needs bubblewrap; ``"subprocess"`` also allows the rlimits-only
    fallback when bubblewrap is missing (no filesystem or network isolation)."""

    sandbox: Literal["bwrap", "subprocess"] = "bwrap"
    directory: Path = Path(DEFAULT_DATA_DIR) / "containers"  # one working directory each
    python: str = ""  # the interpreter the code runs in; default: the server's own
    # Directories the code may import from (read-only, on its PYTHONPATH). None: the server's
    # venv site-packages when it runs from a venv and `python` is unset; [] for none.
    packages: list[Path] | None = None
    uid: int = Field(default=65534, ge=1)  # the user the code runs as when the server is root
    wall_seconds: float = Field(default=60.0, gt=0)
    cpu_seconds: int = Field(default=60, ge=1)
    memory_mb: int = Field(default=1024, ge=64)
    processes: int = Field(default=64, ge=1)
    file_mb: int = Field(default=100, ge=1)
    output_kb: int = Field(default=1024, ge=1)  # stdout + stderr kept; past it the run is killed
    model_output_chars: int = Field(default=8000, ge=100)  # of each stream, told to the model
    idle_minutes: int = Field(default=20, ge=1)  # a container unused this long is deleted


class VectorStoreSettings(_Strict):
    """Vector stores (`[vector_stores]`): background ingestion and the in-memory search indexes."""

    ingestion_concurrency: int = Field(default=2, ge=1, le=64)  # files one process ingests at once
    embed_batch_size: int = Field(default=64, ge=1, le=4096)  # chunks per embedding call
    cache_chunks: int = Field(default=500_000, ge=1)  # chunks kept in memory, all stores
    ann_threshold: int = Field(default=50_000, ge=1)  # chunks from which a store's index is HNSW
    warm_stores: int = Field(default=20, ge=0)  # recently used stores loaded at start (0: none)
    query_timeout: float = Field(default=10.0, gt=0)  # seconds to embed a search's queries
    poll_after_ms: int = Field(default=200, ge=10, le=60_000)  # hint to polling clients


class SearchSourceSettings(_Strict):
    """One web search provider: its type, where it answers, and the variable holding its key
    (the key itself never sits in the configuration)."""

    provider: Literal["tavily", "brave", "searxng"]
    base_url: str | None = None  # default: the provider's public API (searxng: required)
    api_key_env: str | None = None  # e.g. "TAVILY_API_KEY"
    timeout: float = Field(default=15.0, gt=0)

    @model_validator(mode="after")
    def _searxng_needs_url(self) -> SearchSourceSettings:
        if self.provider == "searxng" and not self.base_url:
            raise ValueError("web search provider 'searxng' needs base_url")
        return self

    def resolved_api_key(self, env: Mapping[str, str] | None = None) -> str | None:
        if self.api_key_env is None:
            return None
        return (os.environ if env is None else env).get(self.api_key_env)


class WebSearchSettings(_Strict):
    """The ``web_search`` tool (`[web_search]`). ``live`` serves ordinary requests; ``offline``
    serves ``external_web_access: false`` (e.g. a SearXNG on the local network) — without it,
    such calls are told search is unavailable. Neither: every call is told so."""

    live: SearchSourceSettings | None = None
    offline: SearchSourceSettings | None = None
    max_results: int = Field(default=5, ge=1, le=20)  # per call at search_context_size medium


class McpServerSettings(_Strict):
    """An MCP server declared by the operator (`[[mcp.servers]]`), which requests name by
    ``label``: reached at ``url``, or started per response as a subprocess (``command``) that
    speaks MCP over stdio. ``allowed_tools`` bounds what a request may use; ``require_approval``
    is the default a request may override."""

    label: str = Field(min_length=1, max_length=64, pattern=r"^[a-zA-Z0-9_\-]+$")
    description: str | None = None
    url: str | None = Field(default=None, pattern=r"^https?://")
    headers: dict[str, str] = Field(default_factory=dict)
    authorization_env: str | None = None  # the variable holding a bearer token
    command: str | None = Field(default=None, min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)  # the process's environment, plus PATH
    cwd: Path | None = None
    allowed_tools: list[str] | None = None
    require_approval: Literal["always", "never"] | None = None

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerSettings:
        name = f"MCP server '{self.label}'"
        if (self.url is None) == (self.command is None):
            raise ValueError(f"{name} needs exactly one of url or command")
        if self.url is not None and (self.args or self.env or self.cwd is not None):
            raise ValueError(f"{name}: args, env and cwd are for command (stdio) servers")
        if self.command is not None and (self.headers or self.authorization_env):
            raise ValueError(f"{name}: headers and authorization_env are for url servers")
        return self


class McpSettings(_Strict):
    """The ``mcp`` tool (`[mcp]`): which MCP servers a request may reach, and timeouts.
    Link-local addresses and cloud metadata hosts are always refused."""

    allow_hosts: list[str] = Field(default_factory=list)  # empty: any host not denied
    deny_hosts: list[str] = Field(default_factory=list)
    allow_loopback: bool = False
    allow_private: bool = True  # 10/8, 172.16/12, 192.168/16, fc00::/7
    connect_timeout: float = Field(default=10.0, gt=0)  # connecting + tools/list
    call_timeout: float = Field(default=60.0, gt=0)  # one tools/call
    servers: list[McpServerSettings] = Field(default_factory=list)  # declared: [[mcp.servers]]

    @model_validator(mode="after")
    def _unique_labels(self) -> McpSettings:
        labels = [s.label for s in self.servers]
        repeated = sorted({label for label in labels if labels.count(label) > 1})
        if repeated:
            raise ValueError(f"MCP server labels must be unique; repeated: {', '.join(repeated)}")
        return self


class WebhookSettings(_Strict):
    """``[webhooks]``: which URLs endpoints may have, and how deliveries are retried. Like MCP
    servers: link-local addresses and cloud metadata hosts are always refused; loopback only
    when allowed (``AGENTLOOM_WEBHOOK_ALLOW_LOOPBACK``); plain ``http`` only when allowed."""

    allow_hosts: list[str] = Field(default_factory=list)  # empty: any host not denied
    deny_hosts: list[str] = Field(default_factory=list)
    allow_loopback: bool = False
    allow_private: bool = True
    allow_http: bool = False  # https only, unless this (or a loopback URL that is allowed)
    timeout: float = Field(default=10.0, gt=0)  # one attempt, connect to last byte
    # seconds before each retry of a failed delivery (OpenAI retries for up to 72 hours)
    retry_delays: list[float] = Field(
        default_factory=lambda: [5.0, 300.0, 1800.0, 7200.0, 18000.0, 36000.0, 36000.0],
        max_length=50,
    )

    @field_validator("retry_delays", mode="before")
    @classmethod
    def _split_delays(cls, value: object) -> object:
        """The environment gives the delays as one comma-separated string."""
        if isinstance(value, str):
            return [d.strip() for d in value.split(",") if d.strip()]
        return value

    @field_validator("retry_delays")
    @classmethod
    def _non_negative(cls, value: list[float]) -> list[float]:
        if any(delay < 0 for delay in value):
            raise ValueError("retry delays are seconds, 0 or more")
        return value


class ManagedAgentSettings(_Strict):
    """``[managed_agents]``: agents that live on the server (``/v1/managed-agents``). Each one's
    files (``file_read``'s workspace, its code_interpreter sessions) are kept in a folder of its
    own under ``directory``, never the server's own files."""

    directory: Path = Path(DEFAULT_DATA_DIR) / "agents"
    history_messages: int = Field(default=50, ge=0, le=1000)  # stored messages a turn sees


class LoggingSettings(_Strict):
    """``[logging]``: the server's log lines (docs/operations.md)."""

    format: Literal["text", "json"] = "text"
    access_log: bool = False  # a line per HTTP request (agentloom.access)
    content: bool = False  # the input and output text of each ended response (agentloom.responses)


class ProviderSettings(_Strict):
    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.\-]+$")
    type: str = "openai_compatible"
    base_url: str | None = None
    api_key: str | None = None
    api_key_env: str | None = None
    models: list[str] = Field(default_factory=list)
    discover: bool = True
    timeout: float = Field(default=600.0, gt=0)
    connect_timeout: float = Field(default=10.0, gt=0)
    # deadlines of one answer (docs/configuration.md): to its first chunk, the longest silence
    # between two chunks, the whole answer
    first_byte_timeout: float = Field(default=300.0, gt=0)
    chunk_timeout: float = Field(default=120.0, gt=0)
    total_timeout: float = Field(default=1800.0, gt=0)
    max_retries: int = Field(default=0, ge=0)
    http_client: Literal["auto", "lean", "sdk"] = "auto"
    token_count: TokenCountSetting = "auto"
    # backend model ids (fnmatch patterns) whose /v1/responses are passed through to the
    # backend's own Responses API instead of running agentloom's loop (docs/gateway.md)
    responses: list[str] = Field(default_factory=list)
    # backend model ids (fnmatch patterns) that are embedding models: listed with kind
    # "embeddings", served by /v1/embeddings, a 400 that says so on /v1/responses and chat
    embeddings: list[str] = Field(default_factory=lambda: list(EMBEDDING_PATTERNS))

    @model_validator(mode="after")
    def _responses_passable(self) -> ProviderSettings:
        if not self.responses:
            return self
        if self.type != "openai_compatible":
            raise ValueError(
                f"provider {self.name!r}: 'responses' needs a provider of type"
                f" 'openai_compatible', not {self.type!r}"
            )
        if any(not pattern.strip() for pattern in self.responses):
            raise ValueError(f"provider {self.name!r}: 'responses' patterns must not be empty")
        return self

    def to_config(self, env: Mapping[str, str]) -> ProviderConfig:
        api_key = self.api_key
        if api_key is None and self.api_key_env is not None:
            api_key = env.get(self.api_key_env)
        return ProviderConfig(
            name=self.name,
            type=self.type,
            base_url=self.base_url,
            api_key=api_key,
            models=tuple(self.models),
            discover=self.discover and not self.models,
            timeout=self.timeout,
            connect_timeout=self.connect_timeout,
            deadlines=StreamDeadlines(
                self.first_byte_timeout, self.chunk_timeout, self.total_timeout
            ),
            max_retries=self.max_retries,
            http_client=self.http_client,
            token_count=self.token_count,
            responses=tuple(self.responses),
            embeddings=tuple(self.embeddings),
        )


class DiscoverySettings(_Strict):
    """``[discovery]``: listing the models of providers that discover theirs (``GET /models``).
    A provider that cannot be listed (its backend down) is listed again in the background,
    ``retry_initial`` seconds after the failure, then twice as long each time, at most
    ``retry_max``."""

    retry_initial: float = Field(default=1.0, gt=0)
    retry_max: float = Field(default=60.0, gt=0)

    @model_validator(mode="after")
    def _ordered(self) -> DiscoverySettings:
        if self.retry_max < self.retry_initial:
            raise ValueError("[discovery] retry_max must be at least retry_initial")
        return self


class DeploymentSettings(_Strict):
    """One deployment of a routed model: a provider (by name), the id its backend knows, and
    its share of the calls (``weight``, relative to the others'; 1 by default)."""

    provider: str = Field(min_length=1)
    model: str = Field(min_length=1)
    weight: float = Field(default=1.0, gt=0, allow_inf_nan=False)


class RoutedModelSettings(_Strict):
    """``[[models]]``: a model id served by its deployments, then by its fallbacks
    (docs/gateway.md, "Routing")."""

    id: str = Field(min_length=1)
    deployments: list[DeploymentSettings]
    fallbacks: list[str] = Field(default_factory=list)
    cooldown: float = Field(default=DEFAULT_COOLDOWN, ge=0)
    kind: RouteKind = "chat"  # or "embeddings": served by /v1/embeddings only

    @model_validator(mode="after")
    def _deployed(self) -> RoutedModelSettings:
        if not self.deployments:
            raise ValueError(f"model {self.id!r} needs at least one deployment")
        return self

    def to_config(self) -> RouteConfig:
        return RouteConfig(
            id=self.id,
            deployments=tuple(Deployment(d.provider, d.model, d.weight) for d in self.deployments),
            fallbacks=tuple(self.fallbacks),
            cooldown=self.cooldown,
            kind=self.kind,
        )


class ModelPriceSettings(_Strict):
    """``[prices."<model>"]``: what a model's tokens cost, in dollars per million tokens
    (``cached_input``: cached input tokens, the input price when unset; ``embeddings``: an
    embeddings model's input tokens, the input price when unset)."""

    input: float = Field(default=0.0, ge=0, allow_inf_nan=False)
    cached_input: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    output: float = Field(default=0.0, ge=0, allow_inf_nan=False)
    embeddings: float | None = Field(default=None, ge=0, allow_inf_nan=False)


class Settings(_Strict):
    server: ServerSettings = Field(default_factory=ServerSettings)
    auth: AuthSettings = Field(default_factory=AuthSettings)
    jobs: JobSettings = Field(default_factory=JobSettings)
    limits: RequestLimits = Field(default_factory=RequestLimits)
    database: DatabaseSettings = Field(default_factory=DatabaseSettings)
    engine: EngineSettings = Field(default_factory=EngineSettings)
    providers: list[ProviderSettings] = Field(default_factory=list)
    discovery: DiscoverySettings = Field(default_factory=DiscoverySettings)
    models: list[RoutedModelSettings] = Field(default_factory=list)  # [[models]]: routed ids
    embeddings: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    vector_stores: VectorStoreSettings = Field(default_factory=VectorStoreSettings)
    files: FilesSettings = Field(default_factory=FilesSettings)
    code_interpreter: CodeInterpreterSettings = Field(default_factory=CodeInterpreterSettings)
    web_search: WebSearchSettings = Field(default_factory=WebSearchSettings)
    mcp: McpSettings = Field(default_factory=McpSettings)
    webhooks: WebhookSettings = Field(default_factory=WebhookSettings)
    managed_agents: ManagedAgentSettings = Field(default_factory=ManagedAgentSettings)
    safety: SafetySettings = Field(default_factory=SafetySettings)
    logging: LoggingSettings = Field(default_factory=LoggingSettings)
    retention: RetentionSettings = Field(default_factory=RetentionSettings)
    batches: BatchSettings = Field(default_factory=BatchSettings)
    prices: dict[str, ModelPriceSettings] = Field(default_factory=dict)  # by served model id

    @model_validator(mode="after")
    def _unique_provider_names(self) -> Settings:
        names = [p.name for p in self.providers]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"provider names must be unique; repeated: {', '.join(duplicates)}")
        return self

    @model_validator(mode="after")
    def _routes_resolve(self) -> Settings:
        _check_routes(self.models, self.providers)
        return self

    def provider_configs(self, env: Mapping[str, str] | None = None) -> list[ProviderConfig]:
        env = os.environ if env is None else env
        return [p.to_config(env) for p in self.providers]

    def route_configs(self, kind: RouteKind | None = None) -> list[RouteConfig]:
        """The ``[[models]]`` routes, those of ``kind`` if given."""
        return [m.to_config() for m in self.models if kind is None or m.kind == kind]


def _check_routes(models: list[RoutedModelSettings], providers: list[ProviderSettings]) -> None:
    """Routed ids are unique, their deployments name providers, their fallbacks are served
    (when that can be told before discovery) and lead back to none of them."""
    ids = [m.id for m in models]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise ValueError(f"[[models]] ids must be unique; repeated: {', '.join(repeated)}")
    by_name = {p.name: p for p in providers}
    for model in models:
        unknown = [d.provider for d in model.deployments if d.provider not in by_name]
        if unknown:
            raise ValueError(f"model {model.id!r}: no provider named {unknown[0]!r}")
        if model.kind == "embeddings":
            _check_embedding_deployments(model, by_name)
    _check_kinds(models)
    _check_fallbacks([m for m in models if m.kind == "chat"], providers)
    cycle = _fallback_cycle({m.id: m.fallbacks for m in models})
    if cycle:
        raise ValueError(f"model fallbacks form a cycle: {' -> '.join(cycle)}")


def _check_embedding_deployments(
    model: RoutedModelSettings, providers: Mapping[str, ProviderSettings]
) -> None:
    """The deployments of an embeddings route are OpenAI-compatible ``/embeddings`` endpoints."""
    for deployment in model.deployments:
        provider = providers[deployment.provider]
        if provider.type != "openai_compatible" or not provider.base_url:
            raise ValueError(
                f"model {model.id!r} (embeddings): provider {provider.name!r} is not an"
                " openai_compatible provider with a base_url"
            )


def _check_kinds(models: list[RoutedModelSettings]) -> None:
    """A routed fallback serves the same API as the route it stands in for."""
    kinds = {m.id: m.kind for m in models}
    for model in models:
        other = [f for f in model.fallbacks if kinds.get(f, model.kind) != model.kind]
        if other:
            raise ValueError(
                f"model {model.id!r} is a {model.kind} route; its fallback {other[0]!r} is"
                f" not (a fallback serves the same API)"
            )


def _check_fallbacks(models: list[RoutedModelSettings], providers: list[ProviderSettings]) -> None:
    """Unless a provider discovers its models (its list is known only once it answers), every
    fallback of a chat route is a routed id or a model of a provider's static list (those of an
    embeddings route are served embedding models, known when the server starts)."""
    if any(p.discover and not p.models for p in providers):
        return
    served = {m.id for m in models}
    served |= {name for p in providers for m in p.models for name in (m, f"{p.name}/{m}")}
    for model in models:
        unknown = [f for f in model.fallbacks if f not in served]
        if unknown:
            raise ValueError(f"model {model.id!r}: its fallback {unknown[0]!r} is not served")


def _fallback_cycle(fallbacks: Mapping[str, list[str]]) -> list[str] | None:
    """Routed ids whose fallbacks lead back to the first of them, or ``None``."""

    def walk(path: list[str]) -> list[str] | None:
        for step in fallbacks.get(path[-1], []):
            if step in path:
                return [*path[path.index(step) :], step]
            found = walk([*path, step])
            if found:
                return found
        return None

    return next((cycle for start in fallbacks if (cycle := walk([start]))), None)


_ENV_SCALARS: dict[str, tuple[str, str]] = {
    "AGENTLOOM_HOST": ("server", "host"),
    "AGENTLOOM_PORT": ("server", "port"),
    "AGENTLOOM_MAX_BODY_BYTES": ("server", "max_body_bytes"),
    "AGENTLOOM_WORKERS": ("server", "workers"),
    "AGENTLOOM_MAX_JSON_DEPTH": ("limits", "max_json_depth"),
    "AGENTLOOM_MAX_JSON_VALUES": ("limits", "max_json_values"),
    "AGENTLOOM_MAX_INPUT_ITEMS": ("limits", "max_input_items"),
    "AGENTLOOM_MAX_CONTENT_PARTS": ("limits", "max_content_parts"),
    "AGENTLOOM_MAX_TOOLS": ("limits", "max_tools"),
    "AGENTLOOM_RESPONSE_TIMEOUT": ("limits", "response_timeout"),
    "AGENTLOOM_AUTH": ("auth", "mode"),
    "AGENTLOOM_DATABASE_URL": ("database", "url"),
    "AGENTLOOM_JOBS_CONCURRENCY": ("jobs", "concurrency"),
    "AGENTLOOM_JOBS_LEASE_SECONDS": ("jobs", "lease_seconds"),
    "AGENTLOOM_JOBS_DRAIN_SECONDS": ("jobs", "drain_seconds"),
    "AGENTLOOM_BATCH_REQUESTS": ("batches", "requests"),
    "AGENTLOOM_WEBHOOK_ALLOW_LOOPBACK": ("webhooks", "allow_loopback"),
    "AGENTLOOM_WEBHOOK_RETRY_DELAYS": ("webhooks", "retry_delays"),
    "AGENTLOOM_MAX_MODEL_CALLS": ("engine", "max_model_calls"),
    "AGENTLOOM_WEBSOCKET_MAX_AGE": ("server", "websocket_max_age"),
    "AGENTLOOM_HEADER_TIMEOUT": ("server", "header_timeout"),
    "AGENTLOOM_BODY_IDLE_TIMEOUT": ("server", "body_idle_timeout"),
    "AGENTLOOM_BODY_TIMEOUT": ("server", "body_timeout"),
    "AGENTLOOM_KEEP_ALIVE_TIMEOUT": ("server", "keep_alive_timeout"),
    "AGENTLOOM_MAX_CONNECTIONS": ("server", "max_connections"),
    "AGENTLOOM_SEALING_KEY": ("server", "sealing_key"),
    "AGENTLOOM_SEALING_OLD_KEYS": ("server", "sealing_old_keys"),
    "AGENTLOOM_FILES_DIRECTORY": ("files", "directory"),
    "AGENTLOOM_FILES_MAX_BYTES": ("files", "max_bytes"),
    "AGENTLOOM_AGENTS_DIRECTORY": ("managed_agents", "directory"),
    "AGENTLOOM_CODE_INTERPRETER_SANDBOX": ("code_interpreter", "sandbox"),
    "AGENTLOOM_EMBEDDINGS_TYPE": ("embeddings", "type"),
    "AGENTLOOM_EMBEDDINGS_BASE_URL": ("embeddings", "base_url"),
    "AGENTLOOM_EMBEDDINGS_MODEL": ("embeddings", "model"),
    "AGENTLOOM_EMBEDDINGS_RUNTIME": ("embeddings", "runtime"),
    "AGENTLOOM_EMBEDDINGS_PRECISION": ("embeddings", "precision"),
    "AGENTLOOM_METRICS": ("server", "metrics"),
    "AGENTLOOM_LOG_FORMAT": ("logging", "format"),
    "AGENTLOOM_ACCESS_LOG": ("logging", "access_log"),
    "AGENTLOOM_LOG_CONTENT": ("logging", "content"),
    "AGENTLOOM_RETENTION_RESPONSES": ("retention", "responses"),
}


def load_settings(path: str | Path | None = None, env: Mapping[str, str] | None = None) -> Settings:
    """Read the TOML file (if any), apply environment overrides, validate."""
    env = os.environ if env is None else env
    raw = _read_toml(Path(path)) if path is not None else {}
    _apply_env(raw, env)
    try:
        return Settings.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"invalid configuration: {exc}") from exc


def _read_toml(path: Path) -> dict[str, object]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError as exc:
        raise ConfigError(f"config file not found: {path}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from exc


def _apply_env(raw: dict[str, object], env: Mapping[str, str]) -> None:
    for var, (section, key) in _ENV_SCALARS.items():
        if var in env:
            table = raw.setdefault(section, {})
            if not isinstance(table, dict):
                raise ConfigError(f"[{section}] must be a table")
            table[key] = env[var]
    base_url = env.get("AGENTLOOM_INFERENCE_BASE_URL")
    if base_url:
        providers = raw.setdefault("providers", [])
        if not isinstance(providers, list):
            raise ConfigError("providers must be an array of tables")
        provider = _env_provider(base_url, env)
        # the environment wins: it replaces a file provider of the same name
        providers[:] = [p for p in providers if not _named(p, provider["name"])]
        providers.insert(0, provider)


def _named(provider: object, name: object) -> bool:
    return isinstance(provider, dict) and provider.get("name") == name


def _env_provider(base_url: str, env: Mapping[str, str]) -> dict[str, object]:
    provider: dict[str, object] = {
        "name": env.get("AGENTLOOM_INFERENCE_NAME", "default"),
        "base_url": base_url,
        "api_key": env.get("AGENTLOOM_INFERENCE_API_KEY"),
    }
    models = env.get("AGENTLOOM_INFERENCE_MODELS")
    if models:
        provider["models"] = [m.strip() for m in models.split(",") if m.strip()]
    return provider
