"""Bearer tokens to principals, at the cost of a dictionary lookup on the hot path.

A token is hashed (:class:`~agentloom.auth.keys.KeyHasher`) and looked up in an in-process
cache; a miss reads the database once and remembers the answer, yes or no. Every process watches
the shared ``auth_state.epoch``, which every revocation, deletion, archive and creation bumps,
and drops its caches when the epoch moves, so a revoked key stops working in every process
within one watch interval (and at once in the process that revoked it). A lookup that raced a
revocation never stores its stale answer: answers are kept only if no drop happened meanwhile.

A user's key resolves to the user with their groups, role names and permissions in the key's
project (:meth:`agentloom.storage.roles.SqlRoleStore.access`), cached with the key: every change
to users, groups, memberships and roles bumps the same epoch. A user with no access to the
project left has no principal: their key is refused as a wrong one.

The admin key (from the environment, never stored) is compared in constant time.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time

import anyio

from agentloom.access_rules import AccessRules, Viewer
from agentloom.auth.keys import KeyHasher, same_secret
from agentloom.auth.policy import policy_of
from agentloom.auth.scopes import grants
from agentloom.frozen import frozen
from agentloom.storage.admin_keys import ADMIN_KEY_PREFIX as ADMIN_KEY_ID_PREFIX
from agentloom.storage.admin_keys import SqlAdminKeyStore
from agentloom.storage.connection_faults import DATABASE_FAULTS
from agentloom.storage.projects import KeyOwner, ProjectRow, SqlProjectStore
from agentloom.storage.rate_limits import LimitRow, SqlRateLimitStore
from agentloom.storage.roles import SqlRoleStore
from agentloom.tenancy import OPEN, Policy

log = logging.getLogger(__name__)

MAX_UNKNOWN = 10_000  # remembered wrong tokens (a flood of them must not reach the database)
TOUCH_EVERY = 60.0  # seconds between two ``last_used_at`` writes of one key


@frozen
class Principal:
    """Who a request comes from: a project's key (a service account's or a user's, the user
    with their groups and roles in the project), or the organization (the admin key).

    What it may do is what both its key's ``scopes`` and its user's ``permissions`` grant
    (:mod:`agentloom.auth.scopes`; ``None``: no limit from that side)."""

    project_id: str | None  # None: the admin key
    key_id: str | None = None
    expires_at: float | None = None
    user_id: str | None = None  # a user's key; None: a service account's, the admin key
    email: str | None = None  # the user's
    service_account_id: str | None = None
    group_ids: frozenset[str] = frozenset()
    roles: frozenset[str] = frozenset()  # the names of the user's roles in the project
    scopes: frozenset[str] | None = None  # a restricted key's
    permissions: frozenset[str] | None = None  # what the user's roles grant

    @property
    def is_admin(self) -> bool:
        return self.project_id is None

    def allows(self, scope: str) -> bool:
        """Whether the key and its owner both grant ``scope``."""
        return grants(self.scopes, scope) and grants(self.permissions, scope)

    def viewer(self) -> Viewer | None:
        """Who the principal's stored objects belong to, for the access rules: its user, or
        its service account; ``None`` for the admin key and a server without keys (who see
        every object)."""
        owner = self.user_id or self.service_account_id
        return None if owner is None else Viewer(owner, self.group_ids, self.roles)

    def missing(self, scope: str) -> str | None:
        """Who lacks ``scope``: ``"key"``, ``"user"``, or ``None`` when it is granted."""
        if not grants(self.scopes, scope):
            return "key"
        return None if grants(self.permissions, scope) else "user"


ADMIN = Principal(project_id=None)


@frozen
class _Project:
    active: bool
    policy: Policy

    @classmethod
    def of(
        cls,
        row: ProjectRow | None,
        limits: tuple[LimitRow, ...] = (),
        default_rules: AccessRules | None = None,
    ) -> _Project:
        if row is None:
            return cls(False, OPEN)
        return cls(row.archived_at is None, policy_of(row, limits, default_rules))


class KeyVerifier:
    def __init__(
        self,
        store: SqlProjectStore,
        hasher: KeyHasher,
        *,
        admin_key: str | None,
        limits: SqlRateLimitStore | None = None,
        admins: SqlAdminKeyStore | None = None,
        roles: SqlRoleStore | None = None,
        default_rules: AccessRules | None = None,
    ) -> None:
        """``default_rules``: the access rules of a project without its own."""
        self._store = store
        self._default_rules = default_rules
        self._roles = roles  # a user's groups and roles, for their keys
        self._admins = admins
        self._limits = limits
        self._hasher = hasher
        self._admin_key = admin_key
        self._known: dict[str, Principal] = {}
        self._unknown: set[str] = set()
        self._projects: dict[str, _Project] = {}  # by id: active or not, and its policy
        self._used: dict[str, float] = {}  # key id -> when it was last used, not yet written
        self._touched: dict[str, float] = {}  # key id -> when last_used_at was last written
        self._generation = 0
        self._epoch: int | None = None
        self._nudged = asyncio.Event()

    async def verify(self, token: str) -> Principal | None:
        """The principal of ``token``; ``None`` for a wrong, revoked or expired one."""
        if self._admin_key is not None and same_secret(token, self._admin_key):
            return ADMIN
        digest = self._hasher.digest(token)
        principal = self._known.get(digest)
        if principal is None:
            if digest in self._unknown:
                return None
            principal = await self._look_up(digest)
            if principal is None:
                return None
        now = time.time()
        if principal.expires_at is not None and principal.expires_at <= now:
            return None
        assert principal.key_id is not None
        self._used[principal.key_id] = now
        return principal

    async def project_active(self, project_id: str) -> bool:
        """Whether the project exists and is not archived (for the admin key's
        ``OpenAI-Project`` header)."""
        return (await self._project(project_id)).active

    async def policy(self, project_id: str) -> Policy:
        """What the project may use."""
        return (await self._project(project_id)).policy

    async def _project(self, project_id: str) -> _Project:
        found = self._projects.get(project_id)
        if found is None:
            generation = self._generation
            row = await self._store.get_project(project_id)
            limits: tuple[LimitRow, ...] = ()
            if row is not None and self._limits is not None:
                limits = tuple((await self._limits.limits(project_id)).values())
            found = _Project.of(row, limits, self._default_rules)
            if generation == self._generation:
                self._projects[project_id] = found
        return found

    def drop(self) -> None:
        """Forget every cached answer (after a change this process made, or saw)."""
        self._generation += 1
        self._known.clear()
        self._unknown.clear()
        self._projects.clear()

    def nudge(self, _payload: str = "") -> None:
        """The epoch may have moved (a notification): check it now."""
        self._nudged.set()

    async def watch(self, interval: float) -> None:
        """Follow the shared epoch for the life of the server, and write ``last_used_at``:
        at once when nudged (PostgreSQL notifications), else every ``interval``."""
        while True:
            try:
                await self.check()
            except DATABASE_FAULTS:
                log.warning("could not read the key epoch; retrying", exc_info=True)
            with anyio.move_on_after(interval):
                await self._nudged.wait()
            self._nudged = asyncio.Event()

    async def check(self) -> None:
        """One round of :meth:`watch`."""
        epoch = await self._store.epoch()
        if epoch != self._epoch:
            if self._epoch is not None:
                self.drop()
            self._epoch = epoch
        await self._write_usage()

    async def _look_up(self, digest: str) -> Principal | None:
        generation = self._generation
        owner = await self._store.find_key(digest)
        principal = None if owner is None else await self._principal(owner)
        if owner is None and self._admins is not None:
            admin = await self._admins.find(digest)
            if admin is not None:
                principal = Principal(None, admin.id, admin.expires_at)
        if generation == self._generation:
            if principal is not None:
                self._known[digest] = principal
            elif len(self._unknown) < MAX_UNKNOWN:
                self._unknown.add(digest)
        return principal

    async def _principal(self, owner: KeyOwner) -> Principal | None:
        """The principal of a project key: a service account's, or a user's with their groups
        and roles there (``None``: the user has no access to the project any more)."""
        key = owner.key
        scopes = None if key.scopes is None else frozenset(json.loads(key.scopes))
        if key.user_id is None or self._roles is None:
            account = None if owner.account is None else owner.account.id
            return Principal(
                key.project_id, key.id, key.expires_at, service_account_id=account, scopes=scopes
            )
        access = await self._roles.access(key.user_id, key.project_id)
        if access is None:
            return None
        return Principal(
            key.project_id,
            key.id,
            key.expires_at,
            user_id=access.user.id,
            email=access.user.email,
            group_ids=access.group_ids,
            roles=access.roles,
            scopes=scopes,
            permissions=access.permissions,
        )

    async def _write_usage(self) -> None:
        used, self._used = self._used, {}
        for key_id, when in used.items():
            if when - self._touched.get(key_id, 0.0) >= TOUCH_EVERY:
                self._touched[key_id] = when
                if key_id.startswith(ADMIN_KEY_ID_PREFIX) and self._admins is not None:
                    await self._admins.touch(key_id, when)
                else:
                    await self._store.touch_key(key_id, when)
