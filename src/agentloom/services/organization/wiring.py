"""The organization's side, built for the server's runtime: metering (rate limits and the usage
ledger, which every model call goes through) first, then keys, projects and admin keys."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AsyncExitStack

from agentloom.auth.jwt import JwtVerifier, build_jwt_verifier
from agentloom.auth.keys import KeyHasher
from agentloom.auth.verifier import KeyVerifier
from agentloom.config import Settings
from agentloom.frozen import frozen
from agentloom.metrics import Metrics
from agentloom.services.organization.admin_keys import AdminKeysService
from agentloom.services.organization.audit import AuditLog
from agentloom.services.organization.groups import GroupsService
from agentloom.services.organization.people import PeopleService
from agentloom.services.organization.prices import Prices
from agentloom.services.organization.projects import ProjectsService
from agentloom.services.organization.rate_limits import RateLimiter
from agentloom.services.organization.roles import RolesService
from agentloom.services.organization.usage import UsageLedger
from agentloom.storage.database import Database

__all__ = ["Metering", "Organization", "metering", "organization"]


@frozen
class Metering:
    limiter: RateLimiter  # admits each model call (the catalog asks it)
    usage: UsageLedger  # records what each call used


@frozen
class Organization:
    keys: KeyVerifier
    projects: ProjectsService
    admin_keys: AdminKeysService
    people: PeopleService  # users, invites, a project's users and users' keys
    groups: GroupsService
    roles: RolesService
    jwt: JwtVerifier | None = None  # bearer JWTs, with [auth.jwt]


def metering(
    database: Database, metrics: Metrics | None = None, prices: Prices | None = None
) -> Metering:
    """The limiter and the usage ledger, which prices what it records (``prices``) and
    writes the request log."""
    limiter = RateLimiter(database.rate_limits)
    ledger = UsageLedger(database.usage, limiter, metrics, prices=prices, log=database.request_log)
    return Metering(limiter, ledger)


async def organization(
    settings: Settings,
    database: Database,
    models: Callable[[], list[str]],
    stack: AsyncExitStack,
) -> Organization:
    """The default project ensured and the keys checked; ``models``: the names a project's
    model rules may name."""
    await database.projects.ensure_default(time.time())
    await database.roles.ensure_predefined(time.time())
    hasher = KeyHasher(await database.projects.secret())
    keys = KeyVerifier(
        database.projects,
        hasher,
        admin_key=settings.auth.admin_key(),
        limits=database.rate_limits,
        admins=database.admin_keys,
        roles=database.roles,
        default_rules=settings.auth.default_rules(),
    )
    await keys.check()
    audit = AuditLog(database.audit)
    projects = ProjectsService(
        database.projects,
        hasher,
        changed=keys.drop,
        limits=database.rate_limits,
        audit=audit,
        models=models,
        people=database.people,
        roles=database.roles,
    )
    admin_keys = AdminKeysService(database.admin_keys, hasher, audit, changed=keys.drop)
    people, roles, found = database.people, database.roles, database.projects
    return Organization(
        keys,
        projects,
        admin_keys,
        PeopleService(people, roles, found, hasher, audit=audit, changed=keys.drop),
        GroupsService(people, roles, found, audit=audit, changed=keys.drop),
        RolesService(roles, people, found, audit=audit, changed=keys.drop),
        await _jwt_verifier(settings, keys, stack),
    )


async def _jwt_verifier(
    settings: Settings, keys: KeyVerifier, stack: AsyncExitStack
) -> JwtVerifier | None:
    """The verifier of bearer JWTs, its signing keys loaded, if ``[auth.jwt]`` is set."""
    if settings.auth.jwt is None:
        return None
    verifier = build_jwt_verifier(settings.auth.jwt, keys)
    stack.push_async_callback(verifier.aclose)
    await verifier.start()
    return verifier
