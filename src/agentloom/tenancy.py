"""The project a piece of work belongs to.

Every stored object carries its project, and every storage query is scoped to the project of
the work that runs it, read from here: the authentication middleware sets it for a request (the
project of its API key), background work started by that request inherits it (asyncio copies
the context into new tasks), and work that serves many projects (the ingestion worker) sets it
from the row it picked up. Nothing outside this module passes a project around by hand, so a
new route cannot forget to scope its queries.

With authentication off every request works in :data:`DEFAULT_PROJECT`, which is also where
the data written before projects existed lives, so turning keys on later keeps it.

The project's :class:`Policy` (which models and hosted tools it may use, its access rules)
travels the same way, read where a model is resolved, where a hosted tool is built and where
a store builds its statements.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from contextvars import ContextVar, Token
from dataclasses import field
from typing import Final, Literal

from agentloom.access_rules import AccessRules, Viewer
from agentloom.frozen import frozen

__all__ = [
    "DEFAULT_PROJECT",
    "HOSTED_TOOLS",
    "OPEN",
    "Policy",
    "RateLimit",
    "acting_for",
    "current_key",
    "current_policy",
    "current_project",
    "current_viewer",
]

DEFAULT_PROJECT: Final = "proj_default"
HOSTED_TOOLS: Final = ("code_interpreter", "file_search", "image_generation", "mcp", "web_search")
ModelMode = Literal["allow_list", "deny_list"]


@frozen
class RateLimit:
    """A project's limits on one model; 0: no limit."""

    requests_per_minute: int = 0
    tokens_per_minute: int = 0
    requests_per_day: int = 0


@frozen
class Policy:
    """What a project may use: models (an allow list or a deny list, or any), hosted tools,
    and how long a response may run."""

    model_mode: ModelMode | None = None  # None: every model
    model_ids: frozenset[str] = frozenset()
    denied_tools: frozenset[str] = frozenset()
    rate_limits: Mapping[str, RateLimit] = field(default_factory=dict)  # by model id
    response_timeout: float | None = None  # seconds a response may run; None: the server's
    access: AccessRules | None = None  # who may see and change its stored objects; None: all

    def allows_model(self, *names: str) -> bool:
        """Whether a model known by any of ``names`` (its id, its provider/id) may be used."""
        if self.model_mode is None:
            return True
        listed = any(name in self.model_ids for name in names)
        return listed if self.model_mode == "allow_list" else not listed

    def allows_tool(self, kind: str) -> bool:
        return kind not in self.denied_tools


OPEN: Final = Policy()

_PROJECT: ContextVar[str] = ContextVar("agentloom_project", default=DEFAULT_PROJECT)
_POLICY: ContextVar[Policy] = ContextVar("agentloom_policy", default=OPEN)
_KEY: ContextVar[str | None] = ContextVar("agentloom_key", default=None)
_VIEWER: ContextVar[Viewer | None] = ContextVar("agentloom_viewer", default=None)


def current_project() -> str:
    """The project the running work belongs to."""
    return _PROJECT.get()


def current_key() -> str | None:
    """The API key (or JWT subject) the running work was asked for with, if any."""
    return _KEY.get()


def current_policy() -> Policy:
    """What the running work's project may use."""
    return _POLICY.get()


def current_viewer() -> Viewer | None:
    """Who the running work acts as, for the owners of stored objects and the project's access
    rules: a user or service account; ``None`` for the admin key, a server without keys and
    background work (which sees every object of its project)."""
    return _VIEWER.get()


def acting_for(
    project_id: str,
    policy: Policy = OPEN,
    *,
    key_id: str | None = None,
    viewer: Viewer | None = None,
) -> AbstractContextManager[None]:
    """Run the block (and the tasks it starts) as work of ``project_id`` under ``policy``,
    asked for with ``key_id`` by ``viewer``."""
    return _Acting(project_id, policy, key_id, viewer)


class _Acting(AbstractContextManager[None]):
    """:func:`acting_for`'s block: an object, not a generator (every request enters one)."""

    __slots__ = ("_key", "_policy", "_project", "_tokens", "_viewer")

    def __init__(
        self, project_id: str, policy: Policy, key_id: str | None, viewer: Viewer | None
    ) -> None:
        self._project, self._policy, self._key = project_id, policy, key_id
        self._viewer = viewer
        self._tokens: (
            tuple[Token[str], Token[Policy], Token[str | None], Token[Viewer | None]] | None
        ) = None

    def __enter__(self) -> None:
        self._tokens = (
            _PROJECT.set(self._project),
            _POLICY.set(self._policy),
            _KEY.set(self._key),
            _VIEWER.set(self._viewer),
        )

    def __exit__(self, *_: object) -> None:
        assert self._tokens is not None, "entered first"
        project, rules, key, seen = self._tokens
        _VIEWER.reset(seen)
        _KEY.reset(key)
        _POLICY.reset(rules)
        _PROJECT.reset(project)
