"""Access rules: who may create, read, update and delete a project's stored objects.

A project may hold a list of rules (the admin API's ``access_rules``, an agentloom extension on a
project), in the style of Llama Stack's ``access_policy``::

    {"forbid": {"actions": ["read", "update", "delete"],
                "resource": ["responses", "conversations"]},
     "unless": "user is owner"}

A rule ``permit``\\ s or ``forbid``\\ s its ``actions`` (create, read, update, delete) on a
``resource`` kind (or a list of them; none: every kind) for a ``principal`` (a user or service
account id, or a list; none: anyone), ``when`` its conditions all hold, or ``unless`` they all
do. The conditions: ``user is owner``, ``user is not owner``, ``user in owners groups``,
``user not in owners groups``, ``user with <role> in roles``, ``user with <role> not in roles``,
``resource is unowned``, ``resource is owned``. The first rule that matches decides; when none
does, the action is permitted (a project without rules works as before).

Rules are parsed once, here, into typed objects; a bad one is a 400 naming it. Where they are
checked (beside project scoping, in :mod:`agentloom.storage.access`) the conditions on the
object's owner become SQL: a refused read finds nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Final, Literal, cast, get_args

from agentloom.errors import InvalidRequestError
from agentloom.frozen import frozen
from agentloom.json_types import JSONObject, JSONValue

__all__ = [
    "ACTIONS",
    "RESOURCES",
    "AccessRules",
    "Action",
    "Condition",
    "Rule",
    "Viewer",
    "parse_rules",
    "rules_of",
]

Action = Literal["create", "read", "update", "delete"]
ACTIONS: Final[tuple[Action, ...]] = get_args(Action)
Subject = Literal["owner", "owners_groups", "role", "unowned"]
# The kinds of stored objects that have an owner: each is its table's name.
RESOURCES: Final = (
    "responses",
    "conversations",
    "files",
    "vector_stores",
    "containers",
    "prompts",
    "chat_completions",
    "batches",
    "managed_agents",
)
MAX_RULES: Final = 100
_KEYS: Final = frozenset({"permit", "forbid", "when", "unless", "description"})
_SCOPE_KEYS: Final = frozenset({"actions", "resource", "principal"})
_ROLE: Final = re.compile(r"^user with (\S+) (in|not in) roles$")
_FIXED: Final[dict[str, tuple[Subject, bool]]] = {
    "user is owner": ("owner", False),
    "user is not owner": ("owner", True),
    "user in owners groups": ("owners_groups", False),
    "user not in owners groups": ("owners_groups", True),
    "resource is unowned": ("unowned", False),
    "resource is owned": ("unowned", True),
}


@frozen
class Viewer:
    """Who acts on stored objects: the owner id their new objects get (a user's or a service
    account's), their groups and their role names in the project."""

    id: str
    group_ids: frozenset[str] = frozenset()
    roles: frozenset[str] = frozenset()


@frozen
class Condition:
    """One condition of a rule; ``negated``: its ``not`` form."""

    subject: Subject
    negated: bool = False
    role: str = ""  # a ``role`` condition's role name

    def about_viewer(self, viewer: Viewer) -> bool | None:
        """Whether it holds, when the viewer alone decides (a role); ``None``: it depends on
        the object's owner."""
        if self.subject != "role":
            return None
        return (self.role in viewer.roles) != self.negated

    def for_own(self, viewer: Viewer) -> bool:
        """Whether it holds on an object the viewer is creating (they will own it)."""
        held = {
            "owner": True,
            "owners_groups": bool(viewer.group_ids),
            "unowned": False,
            "role": self.role in viewer.roles,
        }[self.subject]
        return held != self.negated


@frozen
class Rule:
    permit: bool  # False: forbid
    actions: frozenset[Action]
    resources: frozenset[str] | None  # None: every kind
    principals: frozenset[str] | None  # None: anyone
    when: tuple[Condition, ...] = ()
    unless: tuple[Condition, ...] = ()

    def concerns(self, action: Action, resource: str, viewer: Viewer) -> bool:
        """Whether the rule's scope covers ``action`` on ``resource`` by ``viewer``."""
        return (
            action in self.actions
            and (self.resources is None or resource in self.resources)
            and (self.principals is None or viewer.id in self.principals)
        )


@frozen
class AccessRules:
    """A project's rules, in order, and their JSON (as stored and shown)."""

    rules: tuple[Rule, ...]
    text: str

    def shown(self) -> list[JSONObject]:
        return cast(list[JSONObject], json.loads(self.text))


def rules_of(text: str | None) -> AccessRules | None:
    """The rules stored as ``text`` (``None``: none, today's behaviour)."""
    if text is None:
        return None
    return parse_rules(cast(list[JSONValue], json.loads(text)))


def parse_rules(given: Sequence[JSONValue], *, param: str = "access_rules") -> AccessRules | None:
    """``given`` rules, checked and typed; ``None`` for an empty list. A bad rule is an
    :class:`InvalidRequestError` naming it (its index and text)."""
    if len(given) > MAX_RULES:
        raise InvalidRequestError(f"At most {MAX_RULES} access rules.", param=param)
    rules = tuple(_rule(raw, index, param) for index, raw in enumerate(given))
    return AccessRules(rules, json.dumps(list(given))) if rules else None


def _rule(raw: JSONValue, index: int, param: str) -> Rule:
    try:
        return _parsed(raw)
    except ValueError as exc:
        shown = json.dumps(raw)[:300]
        raise InvalidRequestError(
            f"Invalid access rule {index} ({shown}): {exc}",
            param=f"{param}[{index}]",
            code="invalid_access_rule",
        ) from None


def _parsed(raw: JSONValue) -> Rule:
    if not isinstance(raw, dict):
        raise ValueError("a rule is an object with 'permit' or 'forbid'.")
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        raise ValueError(f"unknown field '{unknown[0]}' (the fields: {', '.join(sorted(_KEYS))}).")
    if ("permit" in raw) == ("forbid" in raw):
        raise ValueError("a rule has exactly one of 'permit' and 'forbid'.")
    if "when" in raw and "unless" in raw:
        raise ValueError("a rule has 'when' or 'unless', not both.")
    permit = "permit" in raw
    scope = raw["permit" if permit else "forbid"]
    if not isinstance(scope, dict):
        raise ValueError("'permit' / 'forbid' is an object with 'actions'.")
    return Rule(
        permit,
        _actions(scope),
        *_scope_names(scope),
        when=_conditions(raw.get("when")),
        unless=_conditions(raw.get("unless")),
    )


def _actions(scope: JSONObject) -> frozenset[Action]:
    unknown = sorted(set(scope) - _SCOPE_KEYS)
    if unknown:
        raise ValueError(f"unknown field '{unknown[0]}' in the rule's scope.")
    actions = _names(scope.get("actions"), "actions")
    if not actions:
        raise ValueError(f"'actions' lists one or more of {', '.join(ACTIONS)}.")
    wrong = sorted(actions - set(ACTIONS))
    if wrong:
        raise ValueError(f"unknown action '{wrong[0]}' (the actions: {', '.join(ACTIONS)}).")
    return cast(frozenset[Action], actions)


def _scope_names(scope: JSONObject) -> tuple[frozenset[str] | None, frozenset[str] | None]:
    resources = _names(scope.get("resource"), "resource")
    wrong = sorted((resources or frozenset()) - set(RESOURCES))
    if wrong:
        raise ValueError(f"unknown resource '{wrong[0]}' (the resources: {', '.join(RESOURCES)}).")
    return resources, _names(scope.get("principal"), "principal")


def _names(value: JSONValue, field: str) -> frozenset[str] | None:
    if value is None:
        return None
    listed = [value] if isinstance(value, str) else value
    if not isinstance(listed, list) or not all(isinstance(v, str) for v in listed):
        raise ValueError(f"'{field}' is a string or a list of strings.")
    return frozenset(cast(list[str], listed))


def _conditions(value: JSONValue) -> tuple[Condition, ...]:
    texts = _names(value, "when/unless")
    if value is None or texts is None:
        return ()
    listed = [value] if isinstance(value, str) else cast(list[str], value)
    return tuple(_condition(" ".join(text.split())) for text in listed)


def _condition(text: str) -> Condition:
    fixed = _FIXED.get(text)
    if fixed is not None:
        return Condition(*fixed)
    role = _ROLE.match(text)
    if role is not None:
        return Condition("role", role.group(2) == "not in", role.group(1))
    known = ", ".join([*(f"'{c}'" for c in _FIXED), "'user with <role> in roles'"])
    raise ValueError(f"unknown condition '{text}' (the conditions: {known}).")
