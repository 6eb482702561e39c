"""The monitor operative: a long-horizon operative with four pluggable strategy axes
(memory extraction, observation compression, retrieval, task decomposition)."""

from agentloom.agents.monitor.agent import MONITOR_INSTRUCTIONS, MonitorOperativeAgent
from agentloom.agents.monitor.strategies import AXES, MonitorStrategies

__all__ = ["AXES", "MONITOR_INSTRUCTIONS", "MonitorOperativeAgent", "MonitorStrategies"]
