"""The configurations an eval compares: ``[LABEL=]AGENT[:KEY=VALUE,...]``.

``AGENT`` is a strategy of ``agentloom agents`` (``agents/builders.py``). The keys override the
run's settings for this configuration: ``model``, ``max_turns`` and ``tools`` (names joined by
``+``); any other key is a ``monitor_operative`` strategy axis (``memory_extraction=notes``).
The label names the configuration in the results (default: the text as given), so
``--strategy react --strategy react:model=big`` compares one strategy on two models.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field

from agentloom.errors import InvalidRequestError
from agentloom.frozen import frozen

__all__ = ["Strategy", "StrategyError", "parse_strategy"]

_OWN_KEYS = ("model", "max_turns", "tools")


class StrategyError(InvalidRequestError):
    """A ``--strategy`` that cannot be read."""


@frozen
class Strategy:
    label: str
    agent: str
    model: str | None = None
    max_turns: int | None = None
    tools: tuple[str, ...] | None = None  # None: the run's tools
    axes: Mapping[str, str] = field(default_factory=dict)  # monitor_operative's


def parse_strategy(text: str) -> Strategy:
    """The configuration ``text`` describes (see the module's docstring)."""
    from agentloom.agents.builders import AGENTS

    head, _, rest = text.strip().partition(":")
    label, _, agent = head.rpartition("=")
    agent = agent.strip()
    if agent not in AGENTS:
        raise StrategyError(
            f"unknown agent {agent!r} in --strategy {text!r}; known agents: "
            f"{', '.join(sorted(AGENTS))}"
        )
    settings = _settings(text, rest)
    axes = {key: value for key, value in settings.items() if key not in _OWN_KEYS}
    _check_axes(text, agent, axes)
    return Strategy(
        label=label.strip() or text.strip(),
        agent=agent,
        model=settings.get("model"),
        max_turns=_turns(text, settings.get("max_turns")),
        tools=_tools(settings.get("tools")),
        axes=axes,
    )


def _settings(text: str, rest: str) -> dict[str, str]:
    settings: dict[str, str] = {}
    for pair in filter(None, (part.strip() for part in rest.split(","))):
        key, equals, value = pair.partition("=")
        if not equals or not key.strip() or not value.strip():
            raise StrategyError(f"--strategy {text!r}: {pair!r} is not KEY=VALUE")
        settings[key.strip()] = value.strip()
    return settings


def _check_axes(text: str, agent: str, axes: Mapping[str, str]) -> None:
    if not axes:
        return
    if agent != "monitor_operative":
        raise StrategyError(
            f"--strategy {text!r}: unknown key {next(iter(axes))!r}; keys: {', '.join(_OWN_KEYS)}"
            " (and monitor_operative's strategy axes)"
        )
    from agentloom.agents.monitor import MonitorStrategies

    MonitorStrategies.parse(axes)  # an unknown axis or choice is told now, not per task


def _turns(text: str, given: str | None) -> int | None:
    if given is None:
        return None
    if not given.isdigit() or int(given) < 1:
        raise StrategyError(f"--strategy {text!r}: max_turns must be a whole number, at least 1")
    return int(given)


def _tools(given: str | None) -> tuple[str, ...] | None:
    if given is None:
        return None
    return tuple(name.strip() for name in given.split("+") if name.strip() and name != "none")
