"""A managed agent's task list (``.../tasks``, OpenJarvis's): what it is to do, with its status,
progress and findings, kept by the client (or a tool) and shown in the agent's state."""

from __future__ import annotations

import json
import time
from typing import Any

from agentloom.api.managed_agents import (
    AgentTask,
    AgentTaskList,
    CreateTaskRequest,
    DeletedAgentTask,
    UpdateTaskRequest,
)
from agentloom.errors import NotFoundError
from agentloom.ids import new_id
from agentloom.services.managed_agents.service import ManagedAgentsService
from agentloom.services.managed_agents.wire import task_wire
from agentloom.storage.agent_tasks import SqlAgentTaskStore, TaskRow

__all__ = ["AgentTasks"]


class AgentTasks:
    def __init__(self, agents: ManagedAgentsService, store: SqlAgentTaskStore) -> None:
        self._agents = agents
        self._store = store

    async def create(self, agent_id: str, request: CreateTaskRequest) -> AgentTask:
        await self._agents.stored(agent_id, "update")
        now = time.time()
        row = TaskRow(
            id=new_id("atask"),
            agent_id=agent_id,
            description=request.description,
            status=request.status,
            progress="{}",
            findings="[]",
            created_at=now,
            updated_at=now,
        )
        await self._store.create(row)
        return task_wire(row)

    async def list(self, agent_id: str, status: str | None) -> AgentTaskList:
        await self._agents.stored(agent_id)
        tasks = [task_wire(row) for row in await self._store.list(agent_id, status)]
        return AgentTaskList(data=tasks, tasks=tasks)

    async def get(self, agent_id: str, task_id: str) -> AgentTask:
        await self._agents.stored(agent_id)
        row = await self._store.get(agent_id, task_id)
        if row is None:
            raise _not_found(task_id)
        return task_wire(row)

    async def update(self, agent_id: str, task_id: str, request: UpdateTaskRequest) -> AgentTask:
        await self._agents.stored(agent_id, "update")
        values: dict[str, Any] = {
            name: value
            for name, value in (("description", request.description), ("status", request.status))
            if value is not None
        }
        if request.progress is not None:
            values["progress"] = json.dumps(request.progress)
        if request.findings is not None:
            values["findings"] = json.dumps(request.findings)
        values["updated_at"] = time.time()
        row = await self._store.update(agent_id, task_id, values)
        if row is None:
            raise _not_found(task_id)
        return task_wire(row)

    async def delete(self, agent_id: str, task_id: str) -> DeletedAgentTask:
        await self._agents.stored(agent_id, "update")
        if not await self._store.delete(agent_id, task_id):
            raise _not_found(task_id)
        return DeletedAgentTask(id=task_id)


def _not_found(task_id: str) -> NotFoundError:
    return NotFoundError(f"No task found with id '{task_id}'.", param="task_id")
