"""The running server's parts, opened and closed together by the app's lifespan."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from functools import partial

import anyio
from anyio.abc import TaskGroup
from starlette.requests import HTTPConnection

from agentloom.auth.jwt import JwtVerifier, build_jwt_verifier
from agentloom.auth.keys import KeyHasher
from agentloom.auth.verifier import KeyVerifier
from agentloom.config import Settings
from agentloom.engine.attachments import Attachments
from agentloom.engine.compaction import Compactions
from agentloom.engine.guardrails import Guardrails, StreamWindow
from agentloom.engine.items import StoredItemFinder
from agentloom.engine.prepare import EngineLimits
from agentloom.engine.reasoning import SealedReasoning
from agentloom.engine.service import ResponsesService
from agentloom.errors import InternalError
from agentloom.inference.base import Provider, ProviderConfig
from agentloom.inference.catalog import ModelCatalog
from agentloom.inference.provider_types import build_provider
from agentloom.inference.router import routed_models
from agentloom.metrics import Metrics
from agentloom.retrieval.embedding_models import EmbeddingModel, build_embedding_models
from agentloom.retrieval.embeddings import Embedder, build_embedder
from agentloom.retrieval.routed_embeddings import routed_embedding_models
from agentloom.safety.service import SafetyService
from agentloom.safety.shield_types import build_safety
from agentloom.sealing import Sealer, SealingKey
from agentloom.services.admin_keys import AdminKeysService
from agentloom.services.agent_services import ManagedAgentServices, managed_agent_services
from agentloom.services.audit import AuditLog
from agentloom.services.background import BackgroundResponses
from agentloom.services.chat_gateway import ChatGateway
from agentloom.services.chat_guard import ChatGuards
from agentloom.services.containers import ContainersService
from agentloom.services.conversations import ConversationsService
from agentloom.services.embeddings import EmbeddingsService
from agentloom.services.files import FilesService
from agentloom.services.jobs import JobRunner
from agentloom.services.projects import ProjectsService
from agentloom.services.prompts import PromptsService
from agentloom.services.rate_limits import RateLimiter
from agentloom.services.readiness import CheckKind, Probe, ReadinessRounds
from agentloom.services.response_jobs import ResponseJobs
from agentloom.services.responses_gateway import ResponsesGateway
from agentloom.services.retention import RetentionSweep
from agentloom.services.schedules import Schedules
from agentloom.services.usage import UsageLedger
from agentloom.services.vector_stores import VectorStoresService
from agentloom.services.wakeups import Wakeups
from agentloom.services.webhook_delivery import WebhookDeliveries, WebhookSender
from agentloom.services.webhooks import WebhooksService
from agentloom.storage.blobs import build_blob_store
from agentloom.storage.connection_faults import DATABASE_FAULTS
from agentloom.storage.database import Database
from agentloom.storage.events import EVENTS_CHANNEL
from agentloom.storage.jobs import CANCEL_CHANNEL, JOBS_CHANNEL
from agentloom.storage.keys import sealing_keys
from agentloom.storage.notify import Listener
from agentloom.storage.projects import AUTH_CHANNEL
from agentloom.storage.retention import SWEEP_JOB
from agentloom.storage.vector_stores import INGEST_JOB
from agentloom.storage.webhooks import DELIVERY_JOB
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


@dataclass(frozen=True, slots=True)
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
    schedules: Schedules
    chat: ChatGateway
    native: ResponsesGateway  # /v1/responses passed through to a backend's own
    managed: ManagedAgentServices  # /v1/managed-agents
    containers: ContainersService | None = None
    jwt: JwtVerifier | None = None  # bearer JWTs, with [auth.jwt]
    metrics: Metrics | None = None  # what GET /metrics shows
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
    """Connect the database (migrating it), build providers, discover models, recover.
    ``embedder`` replaces the configured one (its caller closes it)."""
    async with AsyncExitStack() as stack:
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
            log.warning(
                "marked %d responses left in progress by a stopped server as failed", recovered
            )
        configs = {c.name: c for c in settings.provider_configs()}
        built = dict(providers) if providers is not None else await _build(configs, stack)
        if providers is not None:
            configs = {name: configs.get(name, ProviderConfig(name=name)) for name in built}
        if not built:
            log.warning(
                "no inference provider configured: no model can answer. Set "
                "AGENTLOOM_INFERENCE_BASE_URL or declare [[providers]] in --config FILE"
            )
        catalog = ModelCatalog(built, configs)
        chat = routed_models(settings.route_configs("chat"), built, catalog.lookup)
        catalog.route(chat, embeddings=[c.id for c in settings.route_configs("embeddings")])
        await catalog.refresh()
        if embedder is None:
            embedder = build_embedder(settings.embeddings)
            stack.push_async_callback(embedder.aclose)
        web = build_search_sources(settings.web_search)
        stack.push_async_callback(web.aclose)
        safety = build_safety(settings.safety, catalog, metrics.verdict if metrics else None)
        stack.push_async_callback(safety.aclose)
        yield await _services(settings, database, catalog, embedder, web, safety, stack, metrics)


async def _services(
    settings: Settings,
    database: Database,
    catalog: ModelCatalog,
    embedder: Embedder,
    web: WebSearchSources,
    safety: SafetyService,
    stack: AsyncExitStack,
    metrics: Metrics | None = None,
) -> Runtime:
    limits = EngineLimits(
        max_model_calls=settings.engine.max_model_calls,
        truncation_retries=settings.engine.truncation_retries,
        response_timeout=settings.limits.response_timeout,
    )
    sealer = await _sealer(settings, database)
    compactions = Compactions(sealer, max_summary_tokens=settings.engine.compaction_max_tokens)
    finder = StoredItemFinder(database.responses, database.conversations)
    files = FilesService(
        database.files,
        build_blob_store(settings.files.blob_store, settings.files.directory),
        max_bytes=settings.files.max_bytes,
    )
    attachments = Attachments(files)
    await database.projects.ensure_default(time.time())
    hasher = KeyHasher(await database.projects.secret())
    keys = KeyVerifier(
        database.projects,
        hasher,
        admin_key=settings.auth.admin_key(),
        limits=database.rate_limits,
        admins=database.admin_keys,
    )
    runner = JobRunner(
        database.jobs,
        instance_id=settings.server.instance_id,
        settings=settings.jobs,
        policy=keys.policy,
        schedules=database.schedules,
    )
    vector_stores = VectorStoresService(
        database,
        files,
        embedder,
        settings.vector_stores,
        instance_id=runner.instance_id,
        nudge=runner.nudge,
        on_ingested=metrics.ingested if metrics is not None else None,
    )
    runner.handle(
        INGEST_JOB, vector_stores.ingestion, limit=settings.vector_stores.ingestion_concurrency
    )
    files.on_delete.append(vector_stores.forget_file)
    containers = ContainersService(
        database.containers,
        Containers(settings.code_interpreter.directory),
        files,
        idle_minutes=settings.code_interpreter.idle_minutes,
    )
    code = code_runner(settings.code_interpreter, containers)
    conversations = ConversationsService(
        store=database.conversations,
        finder=finder,
        reader=compactions.read,
        attachments=attachments,
    )
    prompts = PromptsService(database.prompts, attachments=attachments)
    limiter = RateLimiter(database.rate_limits)
    catalog.admission = limiter.admit
    usage = UsageLedger(database.usage, limiter, metrics)
    embeddings = _embeddings_service(settings, limiter, usage)
    stack.push_async_callback(embeddings.aclose)
    audit = AuditLog(database.audit)
    await keys.check()
    jwt = await _jwt_verifier(settings, keys, stack)
    window = StreamWindow(settings.safety.stream_batch_chars, settings.safety.stream_overlap_chars)
    guardrails = Guardrails(safety, window)
    service = ResponsesService(
        catalog=catalog,
        store=database.responses,
        conversations=conversations,
        finder=finder,
        limits=limits,
        prompts=prompts,
        compactions=compactions,
        sealed_reasoning=SealedReasoning(sealer),
        attachments=attachments,
        guardrails=guardrails,
        tools=ToolServices(
            searcher=vector_stores,
            web=web,
            code=code,
            mcp_policy=mcp_policy(settings.mcp),
            mcp_limits=McpLimits(settings.mcp.connect_timeout, settings.mcp.call_timeout),
            mcp_servers=declared_servers(settings.mcp.servers),
        ),
        usage=usage,
        log_content=settings.logging.content,
        metrics=metrics,
        in_progress_after=settings.engine.in_progress_after,
    )
    sender = WebhookSender(settings.webhooks.timeout)
    stack.push_async_callback(sender.aclose)
    webhooks = WebhooksService(
        database.webhooks, sealer, sender, settings.webhooks, nudge=runner.nudge
    )
    background = BackgroundResponses(
        service,
        database.responses,
        database.jobs,
        database.events,
        Wakeups(),
        max_queued=settings.jobs.max_queued,
        nudge=runner.nudge,
        announce=webhooks.announce,
    )
    background.stop_here = runner.stop
    runner.handle(
        "response",
        ResponseJobs(
            background,
            service,
            database.jobs,
            database.events,
            instance_id=runner.instance_id,
            released=runner.released,
        ),
    )
    runner.handle(
        DELIVERY_JOB, WebhookDeliveries(database.webhooks, webhooks, sender, settings.webhooks)
    )
    sweep = RetentionSweep(
        database.retention, settings.retention, on_swept=metrics.swept if metrics else None
    )
    runner.handle(SWEEP_JOB, sweep, limit=1)
    await sweep.schedule()
    managed = managed_agent_services(settings, database, catalog, usage, runner, background.wakeups)
    return Runtime(
        settings=settings,
        database=database,
        catalog=catalog,
        responses=service,
        conversations=conversations,
        prompts=prompts,
        files=files,
        vector_stores=vector_stores,
        safety=safety,
        keys=keys,
        projects=ProjectsService(
            database.projects,
            hasher,
            changed=keys.drop,
            limits=database.rate_limits,
            audit=audit,
            models=lambda: [*catalog.all_names(), *embeddings.names()],
        ),
        limiter=limiter,
        usage=usage,
        embeddings=embeddings,
        admin_keys=AdminKeysService(database.admin_keys, hasher, audit, changed=keys.drop),
        background=background,
        jobs=runner,
        webhooks=webhooks,
        schedules=Schedules(database.schedules),
        chat=ChatGateway(catalog, usage, ChatGuards(guardrails), metrics),
        native=ResponsesGateway(catalog, database.responses, finder, usage, guardrails),
        managed=managed,
        containers=containers,
        jwt=jwt,
        metrics=metrics,
    )


def _embeddings_service(
    settings: Settings, limiter: RateLimiter, usage: UsageLedger
) -> EmbeddingsService:
    """The served embedding models, the routed ones (``[[models]]`` of kind embeddings) first."""
    chat = [config.id for config in settings.route_configs("chat")]
    service = EmbeddingsService(_embedding_models(settings), limiter, usage, chat_models=chat)
    providers = {config.name: config for config in settings.provider_configs()}
    routes = settings.route_configs("embeddings")
    service.route(routed_embedding_models(routes, providers, settings.embeddings, service.lookup))
    return service


def _embedding_models(settings: Settings) -> list[EmbeddingModel]:
    """The embedding models served to clients; a remote one is owned by the provider
    configured at its URL."""
    providers = {config.name: config.base_url for config in settings.provider_configs()}
    return build_embedding_models(settings.embeddings, providers)


async def _jwt_verifier(
    settings: Settings, keys: KeyVerifier, stack: AsyncExitStack
) -> JwtVerifier | None:
    """The verifier of bearer JWTs, its signing keys loaded, if ``[auth.jwt]`` is set."""
    if settings.auth.jwt is None:
        return None
    verifier = build_jwt_verifier(settings.auth.jwt, keys)
    stack.push_async_callback(verifier.aclose)
    await verifier.start()
    return verifier


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
        "vector store warm-up": runtime.vector_stores.warm,
        "job runner": runtime.jobs.run,
        "model discovery": partial(
            runtime.catalog.rediscover,
            settings.discovery.retry_initial,
            settings.discovery.retry_max,
        ),
    }
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
