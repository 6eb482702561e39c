"""The app factory that each worker process of ``agentloom serve --workers N`` runs.

Workers are separate processes started by uvicorn: each reads the same configuration (the file
named by ``AGENTLOOM_CONFIG``, then the environment) and opens its own runtime, with its own
instance id, heartbeat and database connections.
"""

from __future__ import annotations

import os

from starlette.applications import Starlette

from agentloom import logs
from agentloom.config import load_settings
from agentloom.server.app import create_app

CONFIG_ENV = "AGENTLOOM_CONFIG"
LOG_LEVEL_ENV = "AGENTLOOM_LOG_LEVEL"  # set by `serve` for its workers
WORKER_APP = "agentloom.server.workers:worker_app"


def worker_app() -> Starlette:
    settings = load_settings(os.environ.get(CONFIG_ENV))
    level = os.environ.get(LOG_LEVEL_ENV, "info")
    logs.configure(level, settings.logging.format, access=settings.logging.access_log)
    return create_app(settings, serving=True)
