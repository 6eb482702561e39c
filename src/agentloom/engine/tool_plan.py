"""Which tools the model is offered, and how ``tool_choice`` is enforced.

The server does not just forward ``tool_choice``: it offers the backend only the tools the choice
allows, forces a named function where the backend supports it, and the turn streamer drops calls
to anything not offered (see :class:`agentloom.engine.turn.CallPolicy`).

Hosted tools (``file_search`` ...) are offered as functions too; the server runs their calls
itself (see :mod:`agentloom.tools`). The client's own tools (``function``, ``custom``,
``namespace``) are offered as :mod:`agentloom.engine.client_tools` flattens them.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Collection, Mapping, Sequence
from dataclasses import field
from types import MappingProxyType

from agentloom.api.items import StoredItem, ToolSearchOutput
from agentloom.api.tools import (
    AllowedToolRef,
    AllowedTools,
    ApplyPatchTool,
    CustomTool,
    CustomToolChoice,
    FunctionTool,
    FunctionToolChoice,
    HostedToolChoice,
    LocalShellTool,
    NamespaceTool,
    ShellTool,
    Tool,
    ToolChoice,
    ToolSearchTool,
)
from agentloom.engine.client_tools import ClientTool, client_tools
from agentloom.engine.turn import CallPolicy
from agentloom.errors import InvalidRequestError
from agentloom.frozen import frozen
from agentloom.inference import base as inf
from agentloom.tools.base import Listed, ServerTool, Toolset
from agentloom.tools.server_tools import (
    ToolRequest,
    ToolServices,
    build_server_tool,
    build_toolset,
    is_toolset,
)

_Offer = ClientTool | ServerTool
_CLIENT_TYPES = (
    FunctionTool,
    CustomTool,
    NamespaceTool,
    ToolSearchTool,
    ShellTool,
    LocalShellTool,
    ApplyPatchTool,
)
_SHELL_KINDS = frozenset({"shell", "local_shell", "apply_patch"})
_LOADABLE = (FunctionTool, CustomTool, NamespaceTool)  # what a tool_search_output may load


@frozen
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

    def with_loaded(self, items: Sequence[StoredItem], *, first_new: int) -> ToolPlan:
        """The plan with the tools the client's tool searches found (``tool_search_output``
        items among ``items``, the new input from ``first_new`` on) offered too, when
        ``tool_choice`` lets the model call more tools. A name already offered keeps its tool."""
        loaded = _loaded(items, first_new=first_new) if self.offer_listed else []
        specs, client = list(self.specs), dict(self.policy.client)
        offered = set(self.policy.offered)
        for tool in loaded:
            if tool.chat_name not in offered and tool.chat_name not in self.server:
                specs.append(tool.spec)
                client[tool.chat_name] = tool
                offered.add(tool.chat_name)
        if len(specs) == len(self.specs):
            return self
        policy = dataclasses.replace(self.policy, offered=frozenset(offered), client=client)
        choice = self.choice or "auto"
        return dataclasses.replace(self, specs=tuple(specs), choice=choice, policy=policy)

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
    if not tools and isinstance(choice, str):
        return _no_tools(choice, parallel=parallel)  # most requests: one plan for all of them
    services = services or ToolServices()
    toolsets = _toolsets(tools, services, frozenset(include))
    offers = _offers(tools, services, frozenset(include))
    offered, mode = _select(offers, choice)
    specs = tuple(offers[name].spec for name in offered)
    chat_choice: inf.ToolChoice | None = mode if specs else None
    if isinstance(choice, FunctionToolChoice | CustomToolChoice | HostedToolChoice):
        chat_choice = inf.NamedToolChoice(offered[0])
    server = {name: t for name, t in offers.items() if not isinstance(t, ClientTool)}
    return ToolPlan(
        specs=specs,
        choice=chat_choice,
        policy=CallPolicy(
            offered=frozenset(offered),
            single_call=not parallel,
            required=bool(specs) and mode == "required",
            hosted=frozenset(server),
            client={name: t for name, t in offers.items() if isinstance(t, ClientTool)},
        ),
        server={name: t for name, t in server.items() if name in offered},
        toolsets=toolsets,
        offer_listed=choice in ("auto", "required"),
    )


@functools.cache
def _no_tools(choice: str, *, parallel: bool) -> ToolPlan:
    """The plan of a request without tools (shared: nothing in it can be changed)."""
    policy = CallPolicy(offered=frozenset(), single_call=not parallel, client=MappingProxyType({}))
    return ToolPlan(
        specs=(),
        choice=None,
        policy=policy,
        server=MappingProxyType({}),
        offer_listed=choice in ("auto", "required"),
    )


def _loaded(items: Sequence[StoredItem], *, first_new: int) -> list[ClientTool]:
    found: list[ClientTool] = []
    for index, item in enumerate(items):
        if not isinstance(item, ToolSearchOutput):
            continue
        where = f"input[{index - first_new}]" if index >= first_new else "tools"
        for position, tool in enumerate(item.tools):
            if isinstance(tool, _LOADABLE):
                found.extend(client_tools(tool, param=f"{where}.tools[{position}]"))
    return found


def _toolsets(
    tools: Sequence[Tool], services: ToolServices, include: frozenset[str]
) -> tuple[Toolset, ...]:
    return tuple(
        build_toolset(ToolRequest(tool=tool, param=f"tools[{index}]", include=include), services)
        for index, tool in enumerate(tools)
        if not isinstance(tool, _CLIENT_TYPES) and is_toolset(tool.type)
    )


def _offers(
    tools: Sequence[Tool], services: ToolServices, include: frozenset[str]
) -> dict[str, _Offer]:
    offers: dict[str, _Offer] = {}
    for index, tool in enumerate(tools):
        param = f"tools[{index}]"
        if isinstance(tool, _CLIENT_TYPES):
            for client in client_tools(tool, param=param):
                _add_offer(offers, client, param=f"{client.param}.name")
        elif not is_toolset(tool.type):
            request = ToolRequest(tool=tool, param=param, include=include)
            _add_offer(offers, build_server_tool(request, services), param=param)
    return offers


def _add_offer(offers: dict[str, _Offer], offer: _Offer, *, param: str) -> None:
    name = offer.spec.name
    if name in offers:
        what = "tool name" if isinstance(offer, ClientTool) else f"'{offer.kind}' tool"
        raise InvalidRequestError(f"Duplicate {what} '{name}'.", param=param)
    offers[name] = offer


def _select(offers: dict[str, _Offer], choice: ToolChoice) -> tuple[list[str], inf.ToolChoice]:
    if isinstance(choice, str):
        return ([] if choice == "none" else list(offers)), choice
    if isinstance(choice, FunctionToolChoice | CustomToolChoice):
        return [_client_name(offers, choice.type, choice.name, param="tool_choice")], "required"
    if isinstance(choice, AllowedTools):
        return _allowed(offers, choice), choice.mode
    assert isinstance(choice, HostedToolChoice)
    return [_hosted_name(offers, choice.type, param="tool_choice")], "required"


def _allowed(offers: dict[str, _Offer], choice: AllowedTools) -> list[str]:
    names: list[str] = []
    for index, ref in enumerate(choice.tools):
        param = f"tool_choice.tools[{index}]"
        if ref.type == "namespace":
            names.extend(_namespace_names(offers, ref.name, param=param))
        else:
            names.append(_ref_name(offers, ref, param=param))
    return names


def _namespace_names(offers: dict[str, _Offer], namespace: str | None, *, param: str) -> list[str]:
    """Every offered tool of a ``namespace`` (``{"type": "namespace", "name": ...}``)."""
    names = [
        name
        for name, offer in offers.items()
        if isinstance(offer, ClientTool) and offer.namespace == namespace
    ]
    if namespace is None or not names:
        raise InvalidRequestError(
            f"Namespace '{namespace}' not found in 'tools' parameter.", param=param
        )
    return names


def _ref_name(offers: dict[str, _Offer], ref: AllowedToolRef, *, param: str) -> str:
    if ref.type not in ("function", "custom"):
        return _hosted_name(offers, ref.type, param=param)
    if ref.name is None:
        raise InvalidRequestError(
            f"An allowed {ref.type} tool needs a name ({{'type': '{ref.type}', 'name': ...}}).",
            param=param,
        )
    return _client_name(offers, ref.type, ref.name, param="tool_choice")


def _hosted_name(offers: dict[str, _Offer], kind: str, *, param: str) -> str:
    """The function name of the request's tool of type ``kind``: a hosted one, or the client's
    ``shell`` / ``local_shell`` / ``apply_patch``."""
    for name, offer in offers.items():
        if offer.kind == kind and (not isinstance(offer, ClientTool) or kind in _SHELL_KINDS):
            return name
    raise InvalidRequestError(f"Tool choice '{kind}' not found in 'tools' parameter.", param=param)


def _client_name(offers: dict[str, _Offer], kind: str, name: str, *, param: str) -> str:
    """The offered name of the client's ``kind`` tool called ``name``: its own name, its
    flattened name, or the name it has in a namespace (when no other tool has it)."""
    exact = offers.get(name)
    if isinstance(exact, ClientTool) and exact.kind == kind:
        return name
    inner = [
        offer.chat_name
        for offer in offers.values()
        if isinstance(offer, ClientTool) and offer.kind == kind and offer.name == name
    ]
    if len(inner) == 1:
        return inner[0]
    if inner:
        raise InvalidRequestError(
            f"Tool choice '{name}' is ambiguous: name one of {', '.join(sorted(inner))}.",
            param=param,
        )
    raise InvalidRequestError(f"Tool choice '{name}' not found in 'tools' parameter.", param=param)
