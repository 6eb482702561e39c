"""The Batch API, built for the server's runtime: its service, and its jobs registered with the
runner."""

from __future__ import annotations

from collections.abc import Callable

from agentloom.batches.dispatch import Dispatcher, ErrorShapes, Services
from agentloom.batches.ending import Endings
from agentloom.batches.jobs import BatchJobs
from agentloom.batches.service import BatchesService
from agentloom.config import Settings
from agentloom.request_entry import RequestEntry
from agentloom.services.files import FilesService
from agentloom.services.jobs.wiring import Jobs
from agentloom.storage.batch_api import BATCH_JOB
from agentloom.storage.database import Database

__all__ = ["batches"]


def batches(
    settings: Settings,
    database: Database,
    files: FilesService,
    services: Services,
    shapes: ErrorShapes,
    jobs: Jobs,
    log_request: Callable[[RequestEntry], None],
) -> BatchesService:
    """``services``: what the batch endpoints run on; ``shapes``: how the server answers an
    error (a request's answer in the error file); ``log_request``: the request log's intake."""
    store = database.batches
    endings = Endings(store, files, jobs.webhooks.announce_event)
    dispatcher = Dispatcher(services, settings.limits, shapes)
    handler = BatchJobs(store, files, dispatcher, endings, settings.batches, log_request)
    jobs.runner.handle(BATCH_JOB, handler)
    return BatchesService(
        store, database.jobs, files, endings, settings.batches, nudge=jobs.runner.nudge
    )
