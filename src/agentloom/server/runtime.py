"""The running server's parts, opened and closed together by the app's lifespan."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import field
from functools import partial

import anyio
from anyio.abc import TaskGroup
from starlette.requests import HTTPConnection

from agentloom.auth.jwt import JwtVerifier
from agentloom.auth.oidc import OidcSignIn, build_sign_in
from agentloom.auth.verifier import KeyVerifier
from agentloom.batches.dispatch import Services as BatchServices
from agentloom.batches.service import BatchesService
from agentloom.batches.wiring import batches
from agentloom.config import Settings
from agentloom.engine.attachments import Attachments
from agentloom.engine.guardrails import Guardrails, StreamWindow
from agentloom.errors import InternalError
from agentloom.frozen import frozen
from agentloom.inference.base import Provider, ProviderConfig
from agentloom.inference.catalog import ModelCatalog
from agentloom.inference.provider_types import build_provider
from agentloom.inference.router import routed_models
from agentloom.metrics import Metrics
from agentloom.metrics_shared import SharedMetrics
from agentloom.responses.background import BackgroundResponses
from agentloom.responses.gateway import ResponsesGateway
from agentloom.responses.service import ResponsesService
from agentloom.responses.wiring import Needs, responses
from agentloom.retrieval.embeddings import Embedder, build_embedder
from agentloom.safety.service import SafetyService
from agentloom.safety.shield_types import build_safety
from agentloom.sealing import Sealer, SealingKey
from agentloom.server.errors import HttpErrorShapes
from agentloom.services.containers import ContainersService
from agentloom.services.conversations import ConversationsService
from agentloom.services.files import FilesService
from agentloom.services.gateway.chat import ChatGateway
from agentloom.services.gateway.embeddings import EmbeddingsService
from agentloom.services.gateway.messages import MessagesGateway
from agentloom.services.gateway.stored import StoredCompletions
from agentloom.services.gateway.wiring import gateway
from agentloom.services.jobs.runner import JobRunner
from agentloom.services.jobs.schedules import Schedules
from agentloom.services.jobs.webhooks import WebhooksService
from agentloom.services.jobs.wiring import jobs
from agentloom.services.managed_agents.wiring import ManagedAgentServices, managed_agent_services
from agentloom.services.mcp_connectors import McpConnectors
from agentloom.services.organization.admin_keys import AdminKeysService
from agentloom.services.organization.budgets import Budgets
from agentloom.services.organization.prices import Prices
from agentloom.services.organization.projects import ProjectsService
from agentloom.services.organization.rate_limits import RateLimiter
from agentloom.services.organization.spend_admin import SpendAdmin
from agentloom.services.organization.usage import UsageLedger
from agentloom.services.organization.wiring import (
    Metering,
    Organization,
    metering,
    organization,
)
from agentloom.services.prompts import PromptsService
from agentloom.services.readiness import CheckKind, Probe, ReadinessRounds
from agentloom.services.sdk_traces import SdkTraces
from agentloom.services.vector_stores.service import VectorStoresService
from agentloom.services.vector_stores.wiring import vector_stores
from agentloom.storage.blobs import build_blob_store
from agentloom.storage.connection_faults import DATABASE_FAULTS
from agentloom.storage.database import Database
from agentloom.storage.events import EVENTS_CHANNEL
from agentloom.storage.jobs import CANCEL_CHANNEL, JOBS_CHANNEL
from agentloom.storage.keys import sealing_keys
from agentloom.storage.notify import Listener
from agentloom.storage.projects import AUTH_CHANNEL
from agentloom.tools.code_interpreter import code_runner
from agentloom.tools.containers import Containers
from agentloom.tools.mcp.declared import declared_servers
from agentloom.tools.mcp.policy import mcp_policy
from agentloom.tools.mcp.toolset import McpLimits
from agentloom.tools.server_tools import ToolServices
from agentloom.tools.web import WebSearchSources, build_search_sources

log = logging.getLogger(__name__)


class Duties:
    """What each background duty of the server (:func:`start_tasks`) is doing, for readiness:
    running, failed (it is started again a moment later), or ended."""

    def __init__(self) -> None:
        self._states: dict[str, str | None] = {}  # None: running; else why it is not

    def running(self, name: str) -> None:
        self._states[name] = None

    def failed(self, name: str, exc: Exception) -> None:
        self._states[name] = f"it failed and is being restarted: {type(exc).__name__}: {exc}"

    def ended(self, name: str) -> None:
        self._states[name] = "it has stopped"

    def problem(self, name: str) -> str | None:
        """Why duty ``name`` is not running; ``None`` when it is."""
        return self._states.get(name, "it has not started")

    def probe(self, name: str, kind: CheckKind) -> Probe:
        async def run() -> str | None:
            return self.problem(name)

        return Probe(kind, name, run)


@frozen
class Runtime:
    settings: Settings
    database: Database
    catalog: ModelCatalog
    responses: ResponsesService
    conversations: ConversationsService
    prompts: PromptsService
    files: FilesService
    vector_stores: VectorStoresService
    safety: SafetyService
    keys: KeyVerifier
    projects: ProjectsService
    limiter: RateLimiter
    usage: UsageLedger
    embeddings: EmbeddingsService
    admin_keys: AdminKeysService
    background: BackgroundResponses
    jobs: JobRunner
    webhooks: WebhooksService
    budgets: Budgets  # spend limits enforced, spend alerts sent
    spend: SpendAdmin  # the admin API's spend limits and alerts
    schedules: Schedules
    chat: ChatGateway
    native: ResponsesGateway  # /v1/responses passed through to a backend's own
    managed: ManagedAgentServices  # /v1/managed-agents
    organization: Organization  # keys, projects, and its people, groups and roles
    containers: ContainersService | None = None
    jwt: JwtVerifier | None = None  # bearer JWTs, with [auth.jwt]
    oidc: OidcSignIn | None = None  # signing in to the console, with [auth.oidc]
    metrics: Metrics | None = None  # what GET /metrics shows
    shared_metrics: SharedMetrics | None = None  # with --workers: every worker's metrics
    stored_completions: StoredCompletions | None = None  # chat completions with store: true
    sdk_traces: SdkTraces | None = None  # what the Agents SDK's trace exporter sent
    mcp_connectors: McpConnectors | None = None  # the projects' configured MCP servers
    messages: MessagesGateway | None = None  # Anthropic's Messages API
    batches: BatchesService | None = None  # /v1/batches
    duties: Duties = field(default_factory=Duties)  # the background duties' states
    readiness: ReadinessRounds = field(default_factory=ReadinessRounds)  # GET /v1/health/ready


@asynccontextmanager
async def open_runtime(
    settings: Settings,
    *,
    providers: Mapping[str, Provider] | None = None,
    embedder: Embedder | None = None,
    metrics: Metrics | None = None,
) -> AsyncIterator[Runtime]:
    """Connect the database (migrating it), build providers, discover models, recover, then
    each feature's services. ``embedder`` replaces the configured one (its caller closes it)."""
    async with AsyncExitStack() as stack:
        database = await _database(settings, stack)
        meter = metering(database, metrics, Prices(settings.prices))
        catalog = await _catalog(settings, providers, meter.limiter.admit, stack)
        if embedder is None:
            embedder = build_embedder(settings.embeddings)
            stack.push_async_callback(embedder.aclose)
        web = build_search_sources(settings.web_search)
        stack.push_async_callback(web.aclose)
        safety = build_safety(settings.safety, catalog, metrics.verdict if metrics else None)
        stack.push_async_callback(safety.aclose)
        parts = _Parts(database, catalog, meter, embedder, web, safety, stack, metrics)
        yield await _services(settings, parts)


@frozen
class _Parts:
    """What the features are built on: opened first, closed last."""

    database: Database
    catalog: ModelCatalog
    metering: Metering
    embedder: Embedder
    web: WebSearchSources
    safety: SafetyService
    stack: AsyncExitStack
    metrics: Metrics | None


async def _database(settings: Settings, stack: AsyncExitStack) -> Database:
    """The database, migrated, this instance beating, what stopped servers left failed."""
    database = await Database.connect(
        settings.database.url,
        instance_id=settings.server.instance_id,
        abandoned_after=settings.server.abandoned_after,
        pool_size=settings.database.pool_size,
    )
    stack.push_async_callback(database.aclose)
    await database.migrate()
    await database.heartbeat()
    recovered = await database.fail_abandoned(settings.server.abandoned_after)
    if recovered:
        log.warning("marked %d responses left in progress by a stopped server as failed", recovered)
    return database


async def _catalog(
    settings: Settings,
    providers: Mapping[str, Provider] | None,
    admission: Callable[[str], Awaitable[None]],
    stack: AsyncExitStack,
) -> ModelCatalog:
    """The configured providers (or ``providers``), their models discovered and routed."""
    configs = {c.name: c for c in settings.provider_configs()}
    built = dict(providers) if providers is not None else await _build(configs, stack)
    if providers is not None:
        configs = {name: configs.get(name, ProviderConfig(name=name)) for name in built}
    catalog = ModelCatalog(built, configs, admission=admission)
    chat = routed_models(settings.route_configs("chat"), built, catalog.lookup)
    catalog.route(chat, embeddings=[c.id for c in settings.route_configs("embeddings")])
    await catalog.refresh()
    return catalog


async def _services(settings: Settings, parts: _Parts) -> Runtime:
    """Each feature's services, from its own wiring module, in the order they need each other."""
    database, catalog, stack, metrics = parts.database, parts.catalog, parts.stack, parts.metrics
    sealer = await _sealer(settings, database)
    window = StreamWindow(settings.safety.stream_batch_chars, settings.safety.stream_overlap_chars)
    guardrails = Guardrails(parts.safety, window)
    gate = gateway(settings, database, catalog, parts.metering, guardrails, stack, metrics)
    org = await organization(
        settings, database, lambda: [*catalog.all_names(), *gate.embeddings.names()], stack
    )
    work = await jobs(settings, database, sealer, org.keys.policy, stack, metrics)
    files = _files(settings, database)
    stores = vector_stores(settings, database, files, parts.embedder, work.runner, metrics)
    containers = ContainersService(
        database.containers,
        Containers(settings.code_interpreter.directory),
        files,
        idle_minutes=settings.code_interpreter.idle_minutes,
    )
    connectors = McpConnectors(database.mcp_connectors, sealer)
    tools = _tools(settings, stores, parts.web, containers, connectors)
    needs = Needs(
        catalog, sealer, Attachments(files), guardrails, tools, parts.metering.usage, work
    )
    served = responses(settings, database, needs, metrics)
    managed = managed_agent_services(
        settings, database, catalog, parts.metering.usage, work.runner, work.wakeups
    )
    ran = BatchServices(served.service, served.native, gate.chat, gate.embeddings)
    usage = parts.metering.usage
    batch_api = batches(settings, database, files, ran, HttpErrorShapes(), work, usage.log)
    budgets = Budgets(database.spend, work.webhooks)
    return Runtime(
        settings=settings,
        database=database,
        catalog=catalog,
        responses=served.service,
        conversations=served.conversations,
        prompts=served.prompts,
        files=files,
        vector_stores=stores,
        safety=parts.safety,
        keys=org.keys,
        projects=org.projects,
        limiter=parts.metering.limiter,
        usage=parts.metering.usage,
        embeddings=gate.embeddings,
        admin_keys=org.admin_keys,
        background=served.background,
        jobs=work.runner,
        webhooks=work.webhooks,
        budgets=budgets,
        spend=SpendAdmin(budgets, org.projects.get_project),
        schedules=work.schedules,
        chat=gate.chat,
        native=served.native,
        managed=managed,
        containers=containers,
        organization=org,
        jwt=org.jwt,
        oidc=_sign_in(settings, org.jwt, org.keys, sealer, stack),
        metrics=metrics,
        shared_metrics=SharedMetrics.from_environment(metrics),
        stored_completions=gate.stored,
        sdk_traces=SdkTraces(database.sdk_traces),
        mcp_connectors=connectors,
        messages=gate.messages,
        batches=batch_api,
    )


def _sign_in(
    settings: Settings,
    verifier: JwtVerifier | None,
    keys: KeyVerifier,
    sealer: Sealer,
    stack: AsyncExitStack,
) -> OidcSignIn | None:
    """The console's sign-in with the JWTs' issuer, if ``[auth.oidc]`` is set."""
    auth = settings.auth
    if auth.oidc is None or auth.jwt is None or verifier is None:
        return None
    sign_in = build_sign_in(auth.oidc, auth.jwt, verifier.keys, sealer, keys)
    stack.push_async_callback(sign_in.client.aclose)
    return sign_in


def _files(settings: Settings, database: Database) -> FilesService:
    blobs = build_blob_store(settings.files.blob_store, settings.files.directory)
    return FilesService(database.files, blobs, max_bytes=settings.files.max_bytes)


def _tools(
    settings: Settings,
    searcher: VectorStoresService,
    web: WebSearchSources,
    containers: ContainersService,
    connectors: McpConnectors,
) -> ToolServices:
    """What the server-side tools run on: the vector stores (file_search), the search engines
    (web_search), the containers (code_interpreter), the MCP servers and their limits."""
    return ToolServices(
        searcher=searcher,
        web=web,
        code=code_runner(settings.code_interpreter, containers),
        mcp_policy=mcp_policy(settings.mcp),
        mcp_limits=McpLimits(settings.mcp.connect_timeout, settings.mcp.call_timeout),
        mcp_servers=declared_servers(settings.mcp.servers),
        mcp_connectors=connectors,
    )


async def _sealer(settings: Settings, database: Database) -> Sealer:
    """Seals with the configured key if there is one, else with the database's (created by
    the first server to start); opens with those, and with the configured old keys (a
    rotation: what they sealed still opens)."""
    stored = await sealing_keys(database.runner)
    old = [SealingKey.from_text(k.get_secret_value()) for k in settings.server.sealing_old_keys]
    configured = settings.server.sealing_key
    if configured is None:
        return Sealer([*stored, *old])
    return Sealer([SealingKey.from_text(configured.get_secret_value()), *old, *stored])


async def _build(
    configs: Mapping[str, ProviderConfig], stack: AsyncExitStack
) -> dict[str, Provider]:
    built: dict[str, Provider] = {}
    for name, config in configs.items():
        provider = build_provider(config)
        stack.push_async_callback(provider.aclose)
        built[name] = provider
    return built


RESTART_AFTER = 1.0  # seconds before a background task that failed is started again


def start_tasks(tasks: TaskGroup, runtime: Runtime) -> None:
    """Everything the server runs beside its requests, for its whole life (each supervised)."""
    settings = runtime.settings
    duties: dict[str, Callable[[], Awaitable[None]]] = {
        "housekeeping": partial(housekeeping, runtime),
        "key watch": partial(runtime.keys.watch, settings.auth.watch_interval),
        "usage ledger": partial(runtime.usage.run, settings.server.usage_flush_interval),
        "budgets": partial(runtime.budgets.run, settings.server.usage_flush_interval),
        "vector store warm-up": runtime.vector_stores.warm,
        "embedding model": runtime.vector_stores.prepare_embedder,
        "job runner": runtime.jobs.run,
        "model discovery": partial(
            runtime.catalog.rediscover,
            settings.discovery.retry_initial,
            settings.discovery.retry_max,
        ),
    }
    if runtime.shared_metrics is not None:
        duties["metrics publishing"] = runtime.shared_metrics.run
    if runtime.database.dialect == "postgresql":
        channels: dict[str, Callable[[str], None]] = {
            AUTH_CHANNEL: runtime.keys.nudge,
            EVENTS_CHANNEL: runtime.background.wakeups.wake,
            JOBS_CHANNEL: runtime.jobs.nudge,
            CANCEL_CHANNEL: runtime.jobs.stop,
        }
        duties["notification listener"] = Listener(settings.database.url, channels).run
    for name, duty in duties.items():
        tasks.start_soon(supervised, name, duty, runtime.duties, name=name)


async def supervised(
    name: str, duty: Callable[[], Awaitable[None]], states: Duties | None = None
) -> None:
    """Run ``duty`` until it returns. An error it lets out is logged and it starts again a
    moment later: one failing duty must not end the task group, which would stop every other
    duty and close the database pools under the requests still being served. ``states``: where
    what it is doing is kept (for readiness)."""
    states = Duties() if states is None else states
    while True:
        states.running(name)
        try:
            await duty()
            states.ended(name)
            return
        except Exception as exc:
            states.failed(name, exc)
            log.exception("the server's %s failed; restarting it", name)
        await anyio.sleep(RESTART_AFTER)


async def housekeeping(runtime: Runtime) -> None:
    """Heartbeat this instance, write the final states the database lost, fail responses of
    instances that stopped beating and delete expired files."""
    while True:
        await anyio.sleep(runtime.settings.server.heartbeat_interval)
        await housekeep(runtime)


async def housekeep(runtime: Runtime) -> None:
    """One round of housekeeping. A database or disk error is logged and the next round tries
    again: a passing fault must not stop the server."""
    try:
        await runtime.database.heartbeat()
        await runtime.responses.lost_writes.retry()
        await runtime.database.fail_abandoned(runtime.settings.server.abandoned_after)
        await runtime.limiter.prune()
        await runtime.files.delete_expired()
        if runtime.containers is not None:
            await runtime.containers.delete_idle()
    except DATABASE_FAULTS:
        log.warning("housekeeping failed; retrying in the next round", exc_info=True)


def runtime_of(connection: HTTPConnection) -> Runtime:
    """The app's runtime (for a request or a WebSocket); a clear error if the lifespan that
    opens it has not run."""
    runtime = getattr(connection.app.state, "runtime", None)
    if not isinstance(runtime, Runtime):
        raise InternalError(
            "the server is not ready: its lifespan did not run (serve the app with lifespan "
            "events enabled)"
        )
    return runtime
