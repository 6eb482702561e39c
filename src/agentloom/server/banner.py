"""What ``agentloom serve`` says once it is up: where it serves, the console, the database, who
may call, each backend with the models found on it (or why none were), and where the docs are.

It replaces uvicorn's start-up lines (:class:`agentloom.logs.UvicornStartupFilter`). With
``--workers N`` every worker opens its own runtime; the first to claim :data:`ONCE_ENV`'s file
says it, the others do not.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from sqlalchemy.engine import make_url

from agentloom.config import Settings
from agentloom.inference.catalog import Backend
from agentloom.redact import redact_url
from agentloom.server.runtime import Runtime
from agentloom.tools.sandbox import bwrap_available

__all__ = ["ONCE_ENV", "announce", "lines"]

log = logging.getLogger("agentloom.server")

ONCE_ENV = "AGENTLOOM_BANNER_ONCE"  # a file path: the worker that creates it says the banner
MODELS_SHOWN = 8  # models named per backend; the rest counted
_ANYWHERE = ("0.0.0.0", "::", "")


def announce(settings: Settings, runtime: Runtime) -> None:
    """Say the banner, once for the whole server; each worker of several says it is up."""
    if os.environ.get(ONCE_ENV):
        log.info("worker process %d is ready", os.getpid())
    if _first_to_say():
        log.info("\n".join(lines(settings, runtime)))


def lines(settings: Settings, runtime: Runtime) -> list[str]:
    base = _base_url(settings)
    shown = [
        f"agentloom is serving the OpenAI API at {base}/v1",
        f"  console   {base}/",
        f"  database  {_database(settings.database.url)}",
        f"  auth      {_auth(settings)}",
    ]
    backends = runtime.catalog.backends()
    if not backends:
        shown.append(
            "  backends  none: no model can answer (set AGENTLOOM_INFERENCE_BASE_URL, or "
            "[[providers]] in --config FILE)"
        )
    for index, backend in enumerate(backends):
        shown.append(f"  {'backends' if index == 0 else '':<8}  {_backend(backend)}")
    sandbox = _sandbox(settings)
    if sandbox is not None:
        shown.append(f"  code      {sandbox}")
    shown.append(f"  docs      {base}/docs (the API), docs/ in the repository (the guides)")
    return shown


def _base_url(settings: Settings) -> str:
    host, port = settings.server.host, settings.server.port
    if host in _ANYWHERE:
        host = "127.0.0.1"  # listening on every address: this one reaches it from here
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"


def _database(url: str) -> str:
    """The database as a user finds it: SQLite's file by its full path, else the URL (no
    password)."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        return f"SQLite, {Path(parsed.database).resolve()}"
    return redact_url(url)


def _sandbox(settings: Settings) -> str | None:
    """Why code_interpreter is off, if it is (its sandbox is missing)."""
    if settings.code_interpreter.sandbox != "bwrap" or bwrap_available():
        return None
    return (
        "code_interpreter is off: its sandbox needs bubblewrap (apt-get install bubblewrap), "
        'or [code_interpreter] sandbox = "subprocess" for the weaker fallback'
    )


def _auth(settings: Settings) -> str:
    if not settings.auth.keys:
        return "none: every caller is the default project (AGENTLOOM_AUTH=keys for a team)"
    if settings.auth.admin_key() is not None:
        return f"API keys; the admin key is {settings.auth.admin_key_env}'s"
    return (
        f"API keys, and no admin key: only project keys made earlier get in. To make the "
        f"first one, set {settings.auth.admin_key_env} to a secret of your own, restart, and "
        "create keys with it (docs/auth.md)"
    )


def _backend(backend: Backend) -> str:
    where = f"{backend.name} ({backend.base_url})" if backend.base_url else backend.name
    if backend.problem is not None:
        return f"{where}: unreachable, retrying in the background: {backend.problem}"
    if not backend.models:
        return f"{where}: no models found"
    named = ", ".join(backend.models[:MODELS_SHOWN])
    more = len(backend.models) - MODELS_SHOWN
    return f"{where}: {named}" + (f" and {more} more" if more > 0 else "")


def _first_to_say() -> bool:
    """Whether this process says the banner: always alone; among workers, the first."""
    path = os.environ.get(ONCE_ENV)
    if not path:
        return True
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        return False
    except OSError:
        return True  # the marker cannot be made: better said twice than never
    return True
