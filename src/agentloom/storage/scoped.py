"""Statements on a project's rows: how a store reaches a table with a ``project_id`` column.

Such a table holds the rows of every project. A store runs its functions on a
:class:`ProjectRunner`, which hands each one the :class:`Project` the work acts for (read from
:mod:`agentloom.tenancy` when the work is asked for: the runner may run it later, on another
thread, in one transaction with other projects' writes). The function builds its statements
with it, so each is about that project's rows alone::

    sa.select(F.c.id).where(project.rows(F, F.c.id == file_id))
    project.insert(F).values(...)          # project_id set
    project.update(F, F.c.id == file_id)   # and project.delete(...)

A statement built once (for SQLAlchemy's compiled cache) compares with :data:`PROJECT`
(``in_project(table)``) and is executed with ``project.params(...)``. Driver SQL, the hot
paths' (:meth:`ProjectRunner.execute`, :meth:`ProjectRunner.fetch`), takes the project as its
first parameter.

Work that serves every project says so: the job claimer, the sweeps of expired and old rows,
the ingestion claim that finds a file's project, finding an API key's project. Its statements
are :func:`across_projects`, marked with :data:`ACROSS_PROJECTS` (a SQL comment, so the
database's own logs show it too), and it runs on :attr:`ProjectRunner.across_projects`.
``tests/storage/test_scoping.py`` reads every statement a workload runs and fails on one that
touches a project's table unmarked without naming the project.

The :class:`Project` also carries who the work acts as: ``owner``, recorded on the rows it
inserts into a table with an ``owner`` column, and ``access``, the project's access rules for
that viewer (:mod:`agentloom.storage.access`), which :meth:`Project.rows`, ``update`` and
``delete`` add to their conditions (a statement built once adds them with
:meth:`Project.visible`). Without rules, or for work without an owner (the admin key, a server
without keys, background work), nothing is added.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, Final, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.sql.selectable import HasPrefixes

from agentloom.access_rules import Action
from agentloom.frozen import frozen
from agentloom.storage.access import Access
from agentloom.storage.runner import Runner
from agentloom.tenancy import current_policy, current_project, current_viewer

__all__ = [
    "ACROSS_PROJECTS",
    "PROJECT",
    "Project",
    "ProjectRunner",
    "across_projects",
    "acting_owner",
    "in_project",
    "restricted",
]

T = TypeVar("T")
S = TypeVar("S", bound=HasPrefixes)
Q = TypeVar("Q", sa.Select[Any], sa.Update)

ACROSS_PROJECTS: Final = "/* across projects */"
PROJECT: Final[sa.BindParameter[str]] = sa.bindparam("project", type_=sa.String())


def in_project(table: sa.FromClause) -> sa.ColumnElement[bool]:
    """``table``'s rows of the project bound as :data:`PROJECT` (statements built once)."""
    return table.c.project_id == PROJECT


def across_projects(statement: S) -> S:
    """``statement``, marked as work that serves every project (it names none)."""
    return statement.prefix_with(ACROSS_PROJECTS)


@frozen
class Project:
    """The project a piece of storage work acts for: the statements it builds."""

    id: str
    owner: str | None = None  # whose the rows it inserts are (a user's or service account's id)
    access: Access | None = None  # the project's access rules for the viewer; None: all rows

    def rows(
        self, table: sa.FromClause, *criteria: sa.ColumnElement[bool]
    ) -> sa.ColumnElement[bool]:
        """The project's rows of ``table`` (an alias too) that match every criterion (and
        that the access rules let the viewer read)."""
        return sa.and_(table.c.project_id == self.id, *criteria, *self._allowed(table, "read"))

    def insert(self, table: sa.Table) -> sa.Insert:
        """An insert into ``table`` of rows of the project (owned by the viewer)."""
        if "owner" not in table.c:
            return table.insert().values(project_id=self.id)
        if self.access is not None:
            self.access.check_create(table)
        return table.insert().values(project_id=self.id, owner=self.owner)

    def update(self, table: sa.Table, *criteria: sa.ColumnElement[bool]) -> sa.Update:
        allowed = self._allowed(table, "update")
        return table.update().where(table.c.project_id == self.id, *criteria, *allowed)

    def delete(self, table: sa.Table, *criteria: sa.ColumnElement[bool]) -> sa.Delete:
        allowed = self._allowed(table, "delete")
        return table.delete().where(table.c.project_id == self.id, *criteria, *allowed)

    def visible(self, statement: Q, table: sa.FromClause, action: Action = "read") -> Q:
        """``statement`` (one built once, on ``table``), limited to the rows the access rules
        let the viewer ``action``."""
        return statement.where(*self._allowed(table, action)) if self.access else statement

    def children_of(
        self, column: sa.ColumnElement[str], parent: sa.Table, action: Action = "read"
    ) -> tuple[sa.ColumnElement[bool], ...]:
        """Rows whose ``column`` names a row of ``parent`` that the access rules let the viewer
        ``action`` (a child follows its parent); nothing without rules."""
        allowed = self._allowed(parent, action)
        if not allowed:
            return ()
        return (column.in_(sa.select(parent.c.id).where(parent.c.project_id == self.id, *allowed)),)

    def params(self, **values: Any) -> dict[str, Any]:
        """Parameters for a statement built with :func:`in_project`."""
        return {"project": self.id, **values}

    def _allowed(self, table: sa.FromClause, action: Action) -> tuple[sa.ColumnElement[bool], ...]:
        if self.access is None:
            return ()
        found = self.access.condition(table, action)
        return () if found is None else (found,)


class ProjectRunner:
    """A :class:`~agentloom.storage.runner.Runner` for the running work's project: each
    function is called with the :class:`Project` and the connection, last."""

    def __init__(self, runner: Runner) -> None:
        self.across_projects = runner  # for work that serves every project
        self.dialect = runner.dialect

    async def read(self, fn: Callable[[Project, Connection], T]) -> T:
        return await self.across_projects.read(partial(fn, _acting()))

    async def write(self, fn: Callable[[Project, Connection], T], *, brief: bool = False) -> T:
        return await self.across_projects.write(partial(fn, _acting()), brief=brief)

    async def write_statement(self, fn: Callable[[Project, Connection], T]) -> T:
        return await self.across_projects.write_statement(partial(fn, _acting()))

    async def execute(self, sql: str, *args: object) -> None:
        """Driver SQL whose first parameter is the project (then ``args``)."""
        await self.across_projects.execute(sql, current_project(), *args)

    async def fetch(self, sql: str, *args: object) -> list[Sequence[Any]]:
        """Rows of driver SQL whose first parameter is the project (then ``args``)."""
        return await self.across_projects.fetch(sql, current_project(), *args)


def restricted() -> bool:
    """Whether the running work is under access rules (driver SQL on a table with owners checks
    this, and reads through a :class:`Project` first when it is)."""
    return acting_owner() is not None and current_policy().access is not None


def acting_owner() -> str | None:
    """Whose the objects the running work creates are: its user's or service account's id
    (``None``: the admin key's, a server's without keys, background work's)."""
    viewer = current_viewer()
    return None if viewer is None else viewer.id


def _acting() -> Project:
    viewer = current_viewer()
    if viewer is None:
        return Project(current_project())
    rules = current_policy().access
    if rules is None:
        return Project(current_project(), viewer.id)
    return Project(current_project(), viewer.id, Access(rules, viewer))
