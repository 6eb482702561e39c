"""A project's policy as stored (JSON columns of ``projects``) and as the admin API shows it."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import cast

from agentloom.access_rules import AccessRules, rules_of
from agentloom.storage.projects import ProjectRow
from agentloom.storage.rate_limits import LimitRow
from agentloom.tenancy import HOSTED_TOOLS, OPEN, ModelMode, Policy, RateLimit


def policy_of(
    row: ProjectRow, limits: Iterable[LimitRow] = (), default_rules: AccessRules | None = None
) -> Policy:
    """The project's policy; ``default_rules``: its access rules when it has none of its own
    (``[auth] access_rules``)."""
    model_mode: ModelMode | None = None
    model_ids: frozenset[str] = frozenset()
    if row.model_policy is not None:
        stored = json.loads(row.model_policy)
        model_mode = cast(ModelMode, stored["mode"])
        model_ids = frozenset(stored["model_ids"])
    denied = frozenset(json.loads(row.tool_policy)) if row.tool_policy is not None else frozenset()
    rates = {
        limit.model: RateLimit(
            limit.max_requests_per_1_minute,
            limit.max_tokens_per_1_minute,
            limit.max_requests_per_1_day,
        )
        for limit in limits
        if limit.limited
    }
    budget = row.response_timeout
    access = rules_of(row.access_rules) or default_rules
    if model_mode is None and not denied and not rates and budget is None and access is None:
        return OPEN
    return Policy(model_mode, model_ids, denied & frozenset(HOSTED_TOOLS), rates, budget, access)


def model_policy_text(mode: ModelMode, model_ids: Iterable[str]) -> str:
    return json.dumps({"mode": mode, "model_ids": list(dict.fromkeys(model_ids))})


def tool_policy_text(denied: Iterable[str]) -> str | None:
    kept = sorted(set(denied) & set(HOSTED_TOOLS))
    return json.dumps(kept) if kept else None
