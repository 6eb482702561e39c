"""Which tools the model is offered, and how ``tool_choice`` is enforced.

The server does not just forward ``tool_choice``: it offers the backend only the tools the choice
allows, forces a named function where the backend supports it, and the turn streamer drops calls
to anything not offered (see :class:`agentloom.engine.turn.CallPolicy`).

Hosted tools (``file_search`` ...) are offered as functions too; the server runs their calls
itself (see :mod:`agentloom.tools`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from agentloom.api.tools import (
    AllowedToolRef,
    AllowedTools,
    FunctionTool,
    FunctionToolChoice,
    HostedToolChoice,
    Tool,
    ToolChoice,
)
from agentloom.engine.turn import CallPolicy
from agentloom.errors import InvalidRequestError
from agentloom.inference import base as inf
from agentloom.tools.base import Listed, ServerTool, Toolset
from agentloom.tools.registry import (
    ToolRequest,
    ToolServices,
    build_server_tool,
    build_toolset,
    is_toolset,
)

_Offer = FunctionTool | ServerTool


@dataclass(frozen=True, slots=True)
class ToolPlan:
    specs: tuple[inf.FunctionSpec, ...]
    choice: inf.ToolChoice | None
    policy: CallPolicy
    server: Mapping[str, ServerTool] = field(default_factory=dict)  # by function name
    toolsets: tuple[Toolset, ...] = ()  # opened before the first model call (``mcp``)
    offer_listed: bool = True  # tool_choice lets the model call the toolsets' tools

    def with_listed(self, listed: Listed) -> ToolPlan:
        """The plan with an opened toolset's tools offered too; a name already taken is
        prefixed (``label__name``)."""
        if not self.offer_listed or not listed.tools:
            return self
        specs, server = list(self.specs), dict(self.server)
        for tool in listed.tools:
            spec = tool.spec
            if spec.name in self.policy.offered or spec.name in server:
                spec = dataclasses.replace(spec, name=f"{listed.prefix}__{spec.name}"[:64])
            specs.append(spec)
            server[spec.name] = tool
        names = frozenset(s.name for s in specs)
        policy = dataclasses.replace(
            self.policy, offered=names, hosted=self.policy.hosted | frozenset(server)
        )
        choice = self.choice or "auto"
        return dataclasses.replace(
            self, specs=tuple(specs), choice=choice, policy=policy, server=server
        )

    def relaxed(self) -> ToolPlan:
        """The plan once a server tool ran: a forced choice (``required``, a named tool) is
        satisfied, and the model may now answer."""
        if not self.policy.required:
            return self
        policy = dataclasses.replace(self.policy, required=False)
        return dataclasses.replace(self, choice="auto", policy=policy)

    def without_server_tools(self) -> ToolPlan:
        """The plan once server tools may no longer be called (``max_tool_calls`` reached)."""
        specs = tuple(s for s in self.specs if s.name not in self.server)
        choice = self.choice if specs else None
        if isinstance(choice, inf.NamedToolChoice) and choice.name in self.server:
            choice = "auto"
        return dataclasses.replace(self, specs=specs, choice=choice, server={}, toolsets=())


def plan_tools(
    tools: Sequence[Tool],
    choice: ToolChoice,
    *,
    parallel: bool,
    services: ToolServices | None = None,
    include: Collection[str] = (),
) -> ToolPlan:
    services = services or ToolServices()
    toolsets = _toolsets(tools, services, frozenset(include))
    offers = _offers(tools, services, frozenset(include))
    offered, mode = _select(offers, choice)
    specs = tuple(_spec(offers[name]) for name in offered)
    chat_choice: inf.ToolChoice | None = mode if specs else None
    if isinstance(choice, FunctionToolChoice | HostedToolChoice):
        chat_choice = inf.NamedToolChoice(offered[0])
    server = {name: t for name, t in offers.items() if not isinstance(t, FunctionTool)}
    return ToolPlan(
        specs=specs,
        choice=chat_choice,
        policy=CallPolicy(
            offered=frozenset(offered),
            single_call=not parallel,
            required=bool(specs) and mode == "required",
            hosted=frozenset(server),
        ),
        server={name: t for name, t in server.items() if name in offered},
        toolsets=toolsets,
        offer_listed=choice in ("auto", "required"),
    )


def _toolsets(
    tools: Sequence[Tool], services: ToolServices, include: frozenset[str]
) -> tuple[Toolset, ...]:
    return tuple(
        build_toolset(ToolRequest(tool=tool, param=f"tools[{index}]", include=include), services)
        for index, tool in enumerate(tools)
        if not isinstance(tool, FunctionTool) and is_toolset(tool.type)
    )


def _offers(
    tools: Sequence[Tool], services: ToolServices, include: frozenset[str]
) -> dict[str, _Offer]:
    offers: dict[str, _Offer] = {}
    for index, tool in enumerate(tools):
        offer: _Offer
        if isinstance(tool, FunctionTool):
            offer = tool
        elif is_toolset(tool.type):
            continue
        else:
            request = ToolRequest(tool=tool, param=f"tools[{index}]", include=include)
            offer = build_server_tool(request, services)
        name = _spec(offer).name
        if name in offers:
            what = "tool name" if isinstance(tool, FunctionTool) else f"'{tool.type}' tool"
            raise InvalidRequestError(
                f"Duplicate {what} '{name}'.",
                param=f"tools[{index}].name"
                if isinstance(tool, FunctionTool)
                else f"tools[{index}]",
            )
        offers[name] = offer
    return offers


def _select(offers: dict[str, _Offer], choice: ToolChoice) -> tuple[list[str], inf.ToolChoice]:
    if isinstance(choice, str):
        return ([] if choice == "none" else list(offers)), choice
    if isinstance(choice, FunctionToolChoice):
        _require_known(offers, choice.name)
        return [choice.name], "required"
    if isinstance(choice, AllowedTools):
        return _allowed(offers, choice), choice.mode
    assert isinstance(choice, HostedToolChoice)
    return [_hosted_name(offers, choice.type, param="tool_choice")], "required"


def _allowed(offers: dict[str, _Offer], choice: AllowedTools) -> list[str]:
    names: list[str] = []
    for index, ref in enumerate(choice.tools):
        names.append(_ref_name(offers, ref, param=f"tool_choice.tools[{index}]"))
    return names


def _ref_name(offers: dict[str, _Offer], ref: AllowedToolRef, *, param: str) -> str:
    if ref.type != "function":
        return _hosted_name(offers, ref.type, param=param)
    if ref.name is None:
        raise InvalidRequestError(
            "An allowed function tool needs a name ({'type': 'function', 'name': ...}).",
            param=param,
        )
    _require_known(offers, ref.name)
    return ref.name


def _hosted_name(offers: dict[str, _Offer], kind: str, *, param: str) -> str:
    """The function name of the request's hosted tool of type ``kind``."""
    for name, offer in offers.items():
        if not isinstance(offer, FunctionTool) and offer.kind == kind:
            return name
    raise InvalidRequestError(f"Tool choice '{kind}' not found in 'tools' parameter.", param=param)


def _require_known(offers: dict[str, _Offer], name: str) -> None:
    if not isinstance(offers.get(name), FunctionTool):
        raise InvalidRequestError(
            f"Tool choice '{name}' not found in 'tools' parameter.", param="tool_choice"
        )


def _spec(offer: _Offer) -> inf.FunctionSpec:
    if not isinstance(offer, FunctionTool):
        return offer.spec
    return inf.FunctionSpec(
        name=offer.name,
        description=offer.description,
        parameters=offer.parameters,  # type: ignore[arg-type]
        strict=offer.strict,
    )
