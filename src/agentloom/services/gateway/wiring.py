"""The gateway, built for the server's runtime: Chat Completions and Embeddings passed through
to the backends, metered and guarded like responses."""

from __future__ import annotations

from contextlib import AsyncExitStack

from agentloom.config import Settings
from agentloom.engine.guardrails import Guardrails
from agentloom.frozen import frozen
from agentloom.inference.catalog import ModelCatalog
from agentloom.metrics import Metrics
from agentloom.retrieval.embedding_models import EmbeddingModel, build_embedding_models
from agentloom.retrieval.routed_embeddings import routed_embedding_models
from agentloom.services.gateway.backend_embeddings import BackendEmbeddings
from agentloom.services.gateway.chat import ChatGateway
from agentloom.services.gateway.chat_guard import ChatGuards
from agentloom.services.gateway.embeddings import EmbeddingsService
from agentloom.services.gateway.messages import MessagesGateway
from agentloom.services.gateway.stored import StoredCompletions
from agentloom.services.organization.wiring import Metering
from agentloom.storage.database import Database

__all__ = ["Gateway", "gateway"]


@frozen
class Gateway:
    chat: ChatGateway
    embeddings: EmbeddingsService
    stored: StoredCompletions  # chat completions created with store: true
    messages: MessagesGateway  # Anthropic's Messages API


def gateway(
    settings: Settings,
    database: Database,
    catalog: ModelCatalog,
    metering: Metering,
    guardrails: Guardrails,
    stack: AsyncExitStack,
    metrics: Metrics | None = None,
) -> Gateway:
    """``stack``: closes the embedding models' clients with the runtime."""
    elsewhere = BackendEmbeddings(catalog)
    stack.push_async_callback(elsewhere.aclose)
    embeddings = _embeddings(settings, metering, elsewhere)
    stack.push_async_callback(embeddings.aclose)
    stored = StoredCompletions(database.chat_completions)
    chat = ChatGateway(catalog, metering.usage, ChatGuards(guardrails), metrics, stored)
    return Gateway(chat, embeddings, stored, MessagesGateway(catalog, metering.usage))


def _embeddings(
    settings: Settings, metering: Metering, elsewhere: BackendEmbeddings
) -> EmbeddingsService:
    """The served embedding models, the routed ones (``[[models]]`` of kind embeddings) first,
    then those of the chat backends (``elsewhere``)."""
    chat = [config.id for config in settings.route_configs("chat")]
    models = _embedding_models(settings)
    service = EmbeddingsService(
        models, metering.limiter, metering.usage, chat_models=chat, elsewhere=elsewhere.find
    )
    providers = {config.name: config for config in settings.provider_configs()}
    routes = settings.route_configs("embeddings")
    service.route(routed_embedding_models(routes, providers, settings.embeddings, service.lookup))
    return service


def _embedding_models(settings: Settings) -> list[EmbeddingModel]:
    """The embedding models served to clients; a remote one is owned by the provider
    configured at its URL."""
    providers = {config.name: config.base_url for config in settings.provider_configs()}
    return build_embedding_models(settings.embeddings, providers)
