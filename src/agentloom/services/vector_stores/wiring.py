"""Vector stores, built for the server's runtime: the service, its ingestion jobs registered
with the runner, and a deleted file dropped from every store that holds it."""

from __future__ import annotations

from agentloom.config import Settings
from agentloom.metrics import Metrics
from agentloom.retrieval.embeddings import Embedder
from agentloom.services.files import FilesService
from agentloom.services.jobs.runner import JobRunner
from agentloom.services.vector_stores.service import VectorStoresService
from agentloom.storage.database import Database
from agentloom.storage.vector_stores import INGEST_JOB

__all__ = ["vector_stores"]


def vector_stores(
    settings: Settings,
    database: Database,
    files: FilesService,
    embedder: Embedder,
    runner: JobRunner,
    metrics: Metrics | None = None,
) -> VectorStoresService:
    service = VectorStoresService(
        database,
        files,
        embedder,
        settings.vector_stores,
        instance_id=runner.instance_id,
        nudge=runner.nudge,
        on_ingested=metrics.ingested if metrics is not None else None,
    )
    limit = settings.vector_stores.ingestion_concurrency
    runner.handle(INGEST_JOB, service.ingestion, limit=limit)
    files.on_delete.append(service.forget_file)
    return service
