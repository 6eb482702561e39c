"""The managed agents' services, built together for the server's runtime: the agents, their
messages, runs and tasks, and the job handler that runs them (registered with the runner)."""

from __future__ import annotations

from agentloom.config import Settings
from agentloom.frozen import frozen
from agentloom.inference.catalog import ModelCatalog
from agentloom.services.jobs.runner import JobRunner
from agentloom.services.jobs.schedules import Schedules
from agentloom.services.jobs.wakeups import Wakeups
from agentloom.services.managed_agents.factory import AgentFactory
from agentloom.services.managed_agents.messages import AgentMessages
from agentloom.services.managed_agents.runs import RUN_JOB, TICK_JOB, AgentRuns
from agentloom.services.managed_agents.service import ManagedAgentsService
from agentloom.services.managed_agents.tasks import AgentTasks
from agentloom.services.organization.usage import UsageLedger
from agentloom.storage.database import Database

__all__ = ["ManagedAgentServices", "managed_agent_services"]


@frozen
class ManagedAgentServices:
    agents: ManagedAgentsService
    messages: AgentMessages
    runs: AgentRuns
    tasks: AgentTasks


def managed_agent_services(
    settings: Settings,
    database: Database,
    catalog: ModelCatalog,
    usage: UsageLedger,
    runner: JobRunner,
    wakeups: Wakeups,
) -> ManagedAgentServices:
    """The services, their runs and ticks handled by ``runner``; ``wakeups``: where followers
    of a run wait (woken by this process's writes and, on PostgreSQL, other processes')."""
    history = settings.managed_agents.history_messages
    factory = AgentFactory(catalog, usage, settings, database)
    agents = ManagedAgentsService(
        database.managed_agents, database.agent_tasks, Schedules(database.schedules), factory
    )
    runs = AgentRuns(
        agents,
        database.managed_agents,
        database.agent_runs,
        database.jobs,
        database.events,
        factory,
        wakeups,
        nudge=runner.nudge,
        stop=runner.stop,
        instance_id=runner.instance_id,
        history=history,
    )
    runner.handle(RUN_JOB, runs)
    runner.handle(TICK_JOB, runs)
    messages = AgentMessages(agents, database.managed_agents, factory, runs, history=history)
    return ManagedAgentServices(agents, messages, runs, AgentTasks(agents, database.agent_tasks))
