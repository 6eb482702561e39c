"""The Responses resource, built for the server's runtime: the engine's parts (compaction,
sealed reasoning, the item finder), the conversations and prompts a response runs on, the
service, background responses with their jobs registered with the runner, and the pass-through
to backends that serve the Responses API themselves."""

from __future__ import annotations

from agentloom.config import Settings
from agentloom.engine.attachments import Attachments
from agentloom.engine.compaction import Compactions
from agentloom.engine.guardrails import Guardrails
from agentloom.engine.items import StoredItemFinder
from agentloom.engine.prepare import EngineLimits
from agentloom.engine.reasoning import SealedReasoning
from agentloom.frozen import frozen
from agentloom.inference.catalog import ModelCatalog
from agentloom.metrics import Metrics
from agentloom.responses.background import RESPONSE_JOB, BackgroundResponses
from agentloom.responses.gateway import ResponsesGateway
from agentloom.responses.jobs import ResponseJobs
from agentloom.responses.service import ResponsesService
from agentloom.sealing import Sealer
from agentloom.services.conversations import ConversationsService
from agentloom.services.jobs.wiring import Jobs
from agentloom.services.organization.usage import UsageLedger
from agentloom.services.prompts import PromptsService
from agentloom.storage.database import Database
from agentloom.tools.server_tools import ToolServices

__all__ = ["Needs", "Responses", "responses"]


@frozen
class Responses:
    service: ResponsesService
    background: BackgroundResponses
    native: ResponsesGateway  # /v1/responses passed through to a backend's own
    conversations: ConversationsService
    prompts: PromptsService


@frozen
class Needs:
    """What the Responses resource runs on, built by other features."""

    catalog: ModelCatalog
    sealer: Sealer
    attachments: Attachments
    guardrails: Guardrails
    tools: ToolServices
    usage: UsageLedger
    jobs: Jobs


def responses(
    settings: Settings, database: Database, needs: Needs, metrics: Metrics | None = None
) -> Responses:
    compactions = Compactions(
        needs.sealer, max_summary_tokens=settings.engine.compaction_max_tokens
    )
    finder = StoredItemFinder(database.responses, database.conversations)
    conversations = ConversationsService(
        store=database.conversations,
        finder=finder,
        reader=compactions.read,
        attachments=needs.attachments,
    )
    prompts = PromptsService(database.prompts, attachments=needs.attachments)
    service = ResponsesService(
        catalog=needs.catalog,
        store=database.responses,
        conversations=conversations,
        finder=finder,
        limits=_limits(settings),
        prompts=prompts,
        compactions=compactions,
        sealed_reasoning=SealedReasoning(needs.sealer),
        attachments=needs.attachments,
        guardrails=needs.guardrails,
        tools=needs.tools,
        usage=needs.usage,
        log_content=settings.logging.content,
        metrics=metrics,
        in_progress_after=settings.engine.in_progress_after,
    )
    background = _background(settings, database, service, needs.jobs)
    native = ResponsesGateway(
        needs.catalog, database.responses, finder, needs.usage, needs.guardrails
    )
    return Responses(service, background, native, conversations, prompts)


def _limits(settings: Settings) -> EngineLimits:
    return EngineLimits(
        max_model_calls=settings.engine.max_model_calls,
        truncation_retries=settings.engine.truncation_retries,
        response_timeout=settings.limits.response_timeout,
    )


def _background(
    settings: Settings, database: Database, service: ResponsesService, jobs: Jobs
) -> BackgroundResponses:
    """Background responses, their jobs run by this process's runner among others."""
    runner = jobs.runner
    background = BackgroundResponses(
        service,
        database.responses,
        database.jobs,
        database.events,
        jobs.wakeups,
        max_queued=settings.jobs.max_queued,
        nudge=runner.nudge,
        announce=jobs.webhooks.announce,
        stop_here=runner.stop,
    )
    run = ResponseJobs(
        background,
        service,
        database.jobs,
        database.events,
        instance_id=runner.instance_id,
        released=runner.released,
    )
    runner.handle(RESPONSE_JOB, run)
    return background
