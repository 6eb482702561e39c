"""The access rules' check, in SQL, beside project scoping (:mod:`agentloom.storage.scoped`).

A table whose rows have an owner (an ``owner`` column, and a kind named in
:data:`agentloom.access_rules.RESOURCES`) is read, updated and deleted under the rules of
the project the work acts for, as the viewer it acts as: :meth:`Access.condition` folds the
rules that concern the action into one condition on the row's owner (rules about the viewer
alone, their roles, are decided here and vanish from the SQL). Rows the rules refuse are not
found: a refused read is a 404 and a list leaves them out, as for another project's rows.

``user in owners groups`` compares the owner with the members of the viewer's groups (the
``group_users`` table, organization-wide). A service account is in no group.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeAlias, cast

import sqlalchemy as sa
from sqlalchemy.sql import operators
from sqlalchemy.sql.elements import UnaryExpression

from agentloom.access_rules import RESOURCES, AccessRules, Action, Condition, Rule, Viewer
from agentloom.errors import PermissionDeniedError
from agentloom.storage.schema_people import group_users

__all__ = ["Access", "resource_of"]

Decision: TypeAlias = "bool | sa.ColumnElement[bool]"  # a row-independent answer, or SQL
_OWNABLE = frozenset(RESOURCES)


def resource_of(table: sa.FromClause) -> str | None:
    """The kind of the objects ``table`` (or an alias of it) holds, when they have owners."""
    base = table.element if isinstance(table, sa.Alias) else table
    name = base.name if isinstance(base, sa.TableClause) else None
    return name if name in _OWNABLE and "owner" in table.c else None


class Access:
    """A viewer under a project's rules."""

    __slots__ = ("rules", "viewer")

    def __init__(self, rules: AccessRules, viewer: Viewer) -> None:
        self.rules = rules
        self.viewer = viewer

    def condition(self, table: sa.FromClause, action: Action) -> sa.ColumnElement[bool] | None:
        """The rows of ``table`` the viewer may ``action``: a condition, or ``None`` for all."""
        resource = resource_of(table)
        if resource is None:
            return None
        decided = self._decide(resource, action, table.c.owner)
        if decided is True:
            return None
        return sa.false() if decided is False else decided

    def check_create(self, table: sa.FromClause) -> None:
        """Refuse (403) the creation of an object in ``table`` the rules forbid."""
        resource = resource_of(table)
        if resource is None:
            return
        for rule in self.rules.rules:
            if rule.concerns("create", resource, self.viewer) and _applies_to_own(
                rule, self.viewer
            ):
                if rule.permit:
                    return
                raise PermissionDeniedError(
                    f"This project's access rules do not let you create {resource}.",
                    code="access_denied",
                )

    def _decide(self, resource: str, action: Action, owner: sa.ColumnElement[str]) -> Decision:
        """The first rule that matches decides; none: permitted. Folded from the last rule."""
        decided: Decision = True
        for rule in reversed(self.rules.rules):
            if not rule.concerns(action, resource, self.viewer):
                continue
            applies = _applies(rule, self.viewer, owner)
            decided = _or(applies, decided) if rule.permit else _and(_not(applies), decided)
        return decided


def _applies(rule: Rule, viewer: Viewer, owner: sa.ColumnElement[str]) -> Decision:
    if rule.when:
        return _all(_holds(c, viewer, owner) for c in rule.when)
    if rule.unless:
        return _not(_all(_holds(c, viewer, owner) for c in rule.unless))
    return True


def _applies_to_own(rule: Rule, viewer: Viewer) -> bool:
    if rule.when:
        return all(c.for_own(viewer) for c in rule.when)
    if rule.unless:
        return not all(c.for_own(viewer) for c in rule.unless)
    return True


def _holds(condition: Condition, viewer: Viewer, owner: sa.ColumnElement[str]) -> Decision:
    """Whether ``condition`` holds on a row with ``owner`` (never NULL: an unowned row's
    owner is nobody)."""
    known = condition.about_viewer(viewer)
    if known is not None:
        return known
    held: Decision
    if condition.subject == "unowned":
        held = owner.is_(None)
    elif condition.subject == "owner":
        held = sa.and_(owner.is_not(None), owner == viewer.id)
    elif not viewer.group_ids:
        held = False
    else:
        members = sa.select(group_users.c.user_id).where(
            group_users.c.group_id.in_(sorted(viewer.group_ids))
        )
        held = sa.and_(owner.is_not(None), owner.in_(members.scalar_subquery()))
    return _not(held) if condition.negated else held


def _all(decisions: Iterable[Decision]) -> Decision:
    found: Decision = True
    for decision in decisions:
        found = _and(found, decision)
    return found


def _not(a: Decision) -> Decision:
    if isinstance(a, bool):
        return not a
    if isinstance(a, UnaryExpression) and a.operator is operators.inv:
        return cast(sa.ColumnElement[bool], a.element)  # not (not x): x
    return sa.not_(a)


def _and(a: Decision, b: Decision) -> Decision:
    if a is False or b is False:
        return False
    if a is True:
        return b
    if b is True:
        return a
    return sa.and_(a, b)


def _or(a: Decision, b: Decision) -> Decision:
    if a is True or b is True:
        return True
    if a is False:
        return b
    if b is False:
        return a
    return sa.or_(a, b)
