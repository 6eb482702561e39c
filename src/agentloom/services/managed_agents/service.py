"""Managed agents (``/v1/managed-agents``): agents that live on the server, each a project's.

An agent is an ``agent_type`` (any strategy of :data:`agentloom.agents.builders.AGENTS`) and a
``config`` (model, tools, instructions, turns, temperature, schedule ...), checked when it is
made or changed: an unknown type or tool is a 400 naming it, and so is a model the project
cannot call, with the models served (one that stops being served later fails the runs).
``template_id`` starts from one of :data:`TEMPLATES` (the request's config overrides its keys).
A schedule (``config.schedule``, or OpenJarvis's ``schedule_type`` / ``schedule_value``) is a
row of the server's schedules (:mod:`agentloom.services.jobs.schedules`): each tick a durable
job, fired once across the server's processes (:mod:`agentloom.services.managed_agents.runs`
runs it). Deleting an agent deletes all it had.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from agentloom.access_rules import Action
from agentloom.api.managed_agents import (
    AgentState,
    AgentTick,
    CreateManagedAgentRequest,
    DeletedManagedAgent,
    ManagedAgent,
    ManagedAgentConfig,
    ManagedAgentPage,
    UpdateManagedAgentRequest,
)
from agentloom.cron import Cron, CronError
from agentloom.errors import InvalidRequestError, NotFoundError
from agentloom.frozen import frozen
from agentloom.ids import new_id
from agentloom.services.jobs.schedules import MIN_EVERY, Schedules
from agentloom.services.managed_agents.factory import AgentFactory
from agentloom.services.managed_agents.wire import agent_page, agent_wire, message_wire, task_wire
from agentloom.storage.agent_tasks import SqlAgentTaskStore
from agentloom.storage.base import Order
from agentloom.storage.managed_agents import AgentRow, SqlManagedAgentStore, StoredAgent

__all__ = ["TEMPLATES", "TICK_JOB", "ManagedAgentsService", "Template"]

TICK_JOB = "agent_tick"  # the kind of a schedule's jobs (their subject: the agent's id)
STATE_MESSAGES = 50  # the latest messages the state shows
STATE_TICKS = 20


@frozen
class Template:
    """A starting point for an agent: its type and configuration."""

    description: str
    agent_type: str
    config: Mapping[str, Any]


TEMPLATES: dict[str, Template] = {
    "assistant": Template(
        "A helpful assistant that can calculate and think step by step",
        "orchestrator",
        {"tools": ["calculator", "think"]},
    ),
    "researcher": Template(
        "Searches the web and keeps notes of what it found, across runs",
        "orchestrator",
        {"tools": ["web_search", "memory_store", "memory_search", "think"]},
    ),
    "monitor": Template(
        "A long-horizon operative, woken up every hour to carry its task forward",
        "monitor_operative",
        {"tools": ["think"], "schedule": {"type": "interval", "every": 3600}},
    ),
}


@frozen
class Period:
    """When an agent's schedule fires: every ``every`` seconds, or at ``cron``'s times."""

    every: float | None = None
    cron: str | None = None


class ManagedAgentsService:
    def __init__(
        self,
        store: SqlManagedAgentStore,
        tasks: SqlAgentTaskStore,
        schedules: Schedules,
        factory: AgentFactory,
    ) -> None:
        self._store = store
        self._tasks = tasks
        self._schedules = schedules
        self._factory = factory

    async def create(self, request: CreateManagedAgentRequest) -> ManagedAgent:
        agent_type, config = _from_template(request)
        self._factory.check(agent_type, config)
        await self._factory.check_model(config)
        period = schedule_of(config)
        now = time.time()
        agent_id = new_id("magent")
        schedule = None
        if period is not None:
            schedule = self._schedules.new(TICK_JOB, agent_id, every=period.every, cron=period.cron)
        row = AgentRow(
            id=agent_id,
            name=request.name,
            agent_type=agent_type,
            config=_dumps(config),
            status="idle",
            created_at=now,
            updated_at=now,
            template_id=request.template_id,
            schedule_id=None if schedule is None else schedule.id,
        )
        await self._store.create(row, schedule)
        return await self.get(agent_id)

    async def get(self, agent_id: str) -> ManagedAgent:
        return agent_wire(await self.stored(agent_id))

    async def stored(self, agent_id: str, action: Action = "read") -> StoredAgent:
        """The agent (a 404 for an unknown id, another project's, or one the access rules do
        not let the caller ``action``: its messages, runs and tasks follow it)."""
        stored = await self._store.get(agent_id, action)
        if stored is None:
            raise not_found(agent_id)
        return stored

    async def list(self, after: str | None, limit: int, order: Order) -> ManagedAgentPage:
        page = await self._store.list_page(after, limit, order)
        if page is None:
            raise NotFoundError(f"No managed agent found with id '{after}'.", param="after")
        return agent_page([agent_wire(s) for s in page.data], has_more=page.has_more)

    async def update(self, agent_id: str, request: UpdateManagedAgentRequest) -> ManagedAgent:
        stored = await self.stored(agent_id, "update")
        row = stored.row
        agent_type = request.agent_type or row.agent_type
        config = request.config or ManagedAgentConfig.model_validate_json(row.config)
        self._factory.check(agent_type, config)
        if request.config is not None:
            await self._factory.check_model(config)
        values: dict[str, Any] = {"agent_type": agent_type, "config": _dumps(config)}
        if request.name is not None:
            values["name"] = request.name
        if request.config is not None:
            values["schedule_id"] = await self._reschedule(stored, schedule_of(config))
        values["updated_at"] = time.time()
        updated = await self._store.update(agent_id, values)
        if updated is None:
            raise not_found(agent_id)
        return agent_wire(updated)

    async def _reschedule(self, stored: StoredAgent, period: Period | None) -> str | None:
        """The agent's schedule for ``period``: kept (the same period: its next run stays),
        changed, made, or deleted (``None``)."""
        current = stored.schedule
        if current is not None and period is None:
            await self._schedules.delete(current.id)
            return None
        if period is None:
            return None
        if current is None:
            made = await self._schedules.create(
                TICK_JOB, stored.row.id, every=period.every, cron=period.cron
            )
            return made.id
        if Period(current.every, current.cron) != period:
            await self._schedules.change(current.id, every=period.every, cron=period.cron)
        return current.id

    async def delete(self, agent_id: str) -> DeletedManagedAgent:
        if not await self._store.delete(agent_id):
            raise not_found(agent_id)
        return DeletedManagedAgent(id=agent_id)

    async def state(self, agent_id: str) -> AgentState:
        """The operative session's saved state and ticks, the tasks, the latest messages."""
        stored = await self.stored(agent_id)
        sessions = self._factory.sessions
        saved = await sessions.load(agent_id, agent_id)
        ticks = await sessions.ticks(agent_id, agent_id, STATE_TICKS)
        tasks = await self._tasks.list(agent_id, None)
        page = await self._store.messages(agent_id, None, STATE_MESSAGES, "desc")
        messages = page.data if page is not None else []
        return AgentState(
            agent=agent_wire(stored),
            session_id=agent_id,
            state=dict(saved.state),
            history_messages=len(saved.history),
            ticks=[
                AgentTick(
                    number=t.number,
                    status=t.status,
                    started_at=t.started_at,
                    finished_at=t.finished_at,
                    summary=t.summary,
                )
                for t in ticks
            ],
            tasks=[task_wire(t) for t in tasks],
            messages=[message_wire(m) for m in messages],
        )


def not_found(agent_id: str) -> NotFoundError:
    return NotFoundError(f"No managed agent found with id '{agent_id}'.", param="managed_agent_id")


def config_of(row: AgentRow) -> ManagedAgentConfig:
    return ManagedAgentConfig.model_validate_json(row.config)


def _dumps(config: ManagedAgentConfig) -> str:
    return json.dumps(config.model_dump(mode="json", exclude_none=True))


def _from_template(request: CreateManagedAgentRequest) -> tuple[str, ManagedAgentConfig]:
    given = request.config or ManagedAgentConfig()
    if request.template_id is None:
        return request.agent_type, given
    template = TEMPLATES.get(request.template_id)
    if template is None:
        raise InvalidRequestError(
            f"Unknown template_id '{request.template_id}'; known: {', '.join(TEMPLATES)}.",
            param="template_id",
            code="invalid_value",
        )
    overrides = given.model_dump(mode="json", exclude_unset=True, exclude_none=True)
    config = ManagedAgentConfig.model_validate({**template.config, **overrides})
    agent_type = request.agent_type if "agent_type" in request.model_fields_set else None
    return agent_type or template.agent_type, config


def schedule_of(config: ManagedAgentConfig) -> Period | None:
    """When the configuration says the agent runs by itself (``None``: only when asked)."""
    if config.schedule is not None:
        if config.schedule.type == "interval":
            return _interval(config.schedule.every, "config.schedule.every")
        return _cron(config.schedule.cron, "config.schedule.cron")
    if config.schedule_type in (None, "manual"):
        return None
    value = config.schedule_value
    if config.schedule_type == "interval":
        return _interval(_number(value), "config.schedule_value")
    return _cron(value if isinstance(value, str) else None, "config.schedule_value")


def _number(value: str | float | int | None) -> float | None:
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None if value is None else float(value)


def _interval(every: float | None, param: str) -> Period:
    if every is None or not every >= MIN_EVERY or every != every or every == float("inf"):
        raise InvalidRequestError(
            f"An interval schedule needs a number of seconds of at least {MIN_EVERY:g}.",
            param=param,
            code="invalid_value",
        )
    return Period(every=float(every))


def _cron(expression: str | None, param: str) -> Period:
    if expression is None:
        raise InvalidRequestError(
            "A cron schedule needs a cron expression (five fields, UTC).", param=param
        )
    try:
        Cron.parse(expression)
    except CronError as exc:
        raise InvalidRequestError(
            f"Invalid cron expression '{expression}': {exc}.", param=param, code="invalid_value"
        ) from None
    return Period(cron=expression)
