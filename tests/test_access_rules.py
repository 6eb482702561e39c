"""The access rules' grammar (agentloom.access_rules) and their check in SQL
(agentloom.storage.access), on rows of a real SQLite database."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from agentloom.access_rules import Viewer, parse_rules
from agentloom.errors import InvalidRequestError, PermissionDeniedError
from agentloom.storage import schema
from agentloom.storage.access import Access

R = schema.responses
OWNERS = {"resp_ada": "user-ada", "resp_bob": "user-bob", "resp_old": None}
ADA = Viewer("user-ada", frozenset({"g-lab"}))
BOB = Viewer("user-bob", frozenset({"g-lab"}))
CAROL = Viewer("user-carol", roles=frozenset({"auditor"}))
PRIVATE = {"forbid": {"actions": ["read", "update", "delete"]}, "unless": "user is owner"}
GROUP = {"permit": {"actions": ["read"]}, "when": "user in owners groups"}
AUDITOR = {"permit": {"actions": ["read"]}, "when": "user with auditor in roles"}
UNOWNED = {"permit": {"actions": ["read"]}, "when": "resource is unowned"}
NOT_MINE = {"forbid": {"actions": ["delete"]}, "when": "user is not owner"}
NOT_CAROL = {"forbid": {"actions": ["read"], "principal": "user-carol"}}
NOR_GROUP = {"forbid": {"actions": ["read"]}, "unless": ["user is owner", "user in owners groups"]}
OTHER_KIND = {"forbid": {"actions": ["read"], "resource": "conversations"}}
OUTSIDERS = {"forbid": {"actions": ["read"]}, "when": "user not in owners groups"}


@pytest.fixture(scope="module")
def db() -> Iterator[sa.Connection]:
    engine = sa.create_engine("sqlite://")
    schema.metadata.create_all(engine, tables=[R, schema.users, schema.groups, schema.group_users])
    with engine.begin() as conn:
        conn.execute(schema.users.insert(), [_user("user-ada"), _user("user-bob")])
        conn.execute(schema.groups.insert(), [{"id": "g-lab", "name": "lab", "created_at": 0}])
        members = [{"group_id": "g-lab", "user_id": u, "created_at": 0} for u in OWNERS.values()]
        conn.execute(schema.group_users.insert(), [m for m in members if m["user_id"]])
        conn.execute(R.insert(), [_response(rid, owner) for rid, owner in OWNERS.items()])
    with engine.connect() as conn:
        yield conn


def _user(user_id: str) -> dict[str, Any]:
    return {
        "id": user_id,
        "email": f"{user_id}@x",
        "name": user_id,
        "role": "reader",
        "added_at": 0,
    }


def _response(response_id: str, owner: str | None) -> dict[str, Any]:
    return {
        "id": response_id,
        "created_at": 0,
        "model": "m",
        "status": "completed",
        "body": "{}",
        "owner": owner,
    }


def seen(db: sa.Connection, rules: list[Any], viewer: Viewer, action: str = "read") -> set[str]:
    parsed = parse_rules(rules)
    assert parsed is not None
    condition = Access(parsed, viewer).condition(R, action)  # type: ignore[arg-type]
    query = sa.select(R.c.id)
    if condition is not None:
        query = query.where(condition)
    return set(db.scalars(query))


EVERYTHING = set(OWNERS)


@pytest.mark.parametrize(
    ("rules", "viewer", "action", "expected"),
    [
        ([PRIVATE], ADA, "read", {"resp_ada"}),
        ([PRIVATE], CAROL, "read", set()),
        ([PRIVATE], CAROL, "create", EVERYTHING),  # not an action the rule names
        ([GROUP, PRIVATE], BOB, "read", {"resp_ada", "resp_bob"}),
        ([GROUP, PRIVATE], BOB, "delete", {"resp_bob"}),
        ([AUDITOR, PRIVATE], CAROL, "read", EVERYTHING),
        ([UNOWNED, PRIVATE], CAROL, "read", {"resp_old"}),
        ([NOT_MINE], CAROL, "delete", set()),
        ([NOT_MINE], ADA, "delete", {"resp_ada"}),
        ([OTHER_KIND], CAROL, "read", EVERYTHING),
        ([NOT_CAROL], CAROL, "read", set()),
        ([NOT_CAROL], ADA, "read", EVERYTHING),
        ([NOR_GROUP], BOB, "read", {"resp_bob"}),
        ([OUTSIDERS], BOB, "read", {"resp_ada", "resp_bob"}),
    ],
)  # fmt: skip
def test_the_first_matching_rule_decides(
    db: sa.Connection, rules: list[Any], viewer: Viewer, action: str, expected: set[str]
) -> None:
    assert seen(db, rules, viewer, action) == expected


def test_a_forbidden_create_is_refused() -> None:
    rules = parse_rules([{"forbid": {"actions": ["create"], "resource": "responses"}}])
    assert rules is not None
    with pytest.raises(PermissionDeniedError):
        Access(rules, ADA).check_create(R)
    Access(rules, ADA).check_create(schema.files)  # another kind
    owners_only = parse_rules(
        [{"forbid": {"actions": ["create"]}, "unless": "user in owners groups"}]
    )
    assert owners_only is not None
    Access(owners_only, ADA).check_create(R)  # in a group: their own object is their group's
    with pytest.raises(PermissionDeniedError):
        Access(owners_only, CAROL).check_create(R)


def test_tables_without_owners_are_not_checked() -> None:
    rules = parse_rules([{"forbid": {"actions": ["read"]}}])
    assert rules is not None
    assert Access(rules, ADA).condition(schema.items, "read") is None
    assert Access(rules, ADA).condition(schema.webhook_endpoints, "read") is None
    assert Access(rules, ADA).condition(R.alias("r"), "read") is not None  # an alias too


@pytest.mark.parametrize(
    ("rule", "says"),
    [
        ("permit everything", "a rule is an object"),
        ({"permit": {"actions": ["read"]}, "forbid": {"actions": ["read"]}}, "exactly one of"),
        ({"allow": {"actions": ["read"]}}, "unknown field 'allow'"),
        ({"permit": {"actions": []}}, "'actions' lists one or more"),
        ({"permit": {"actions": ["write"]}}, "unknown action 'write'"),
        ({"permit": {"actions": ["read"], "resource": "models"}}, "unknown resource 'models'"),
        ({"permit": {"actions": ["read"], "who": "x"}}, "unknown field 'who'"),
        ({"permit": {"actions": ["read"]}, "when": "user is the boss"}, "unknown condition"),
        ({"permit": {"actions": ["read"]}, "when": "x", "unless": "y"}, "not both"),
        ({"permit": {"actions": "read"}, "when": 3}, "a string or a list of strings"),
    ],
)
def test_a_bad_rule_is_named(rule: Any, says: str) -> None:
    with pytest.raises(InvalidRequestError) as refused:
        parse_rules([PRIVATE, rule])
    assert refused.value.param == "access_rules[1]"
    assert "access rule 1" in str(refused.value)
    assert says in str(refused.value)


def test_rules_parse_once_and_read_back() -> None:
    rules = parse_rules(
        [PRIVATE, {"permit": {"actions": ["read"]}, "when": "user  with  x in roles"}]
    )
    assert rules is not None
    assert rules.shown()[0] == PRIVATE
    assert rules.rules[1].when[0].role == "x"
    assert parse_rules([]) is None


DOCS = Path(__file__).resolve().parents[1] / "docs" / "auth.md"


def test_the_documented_policy_parses_and_decides(db: sa.Connection) -> None:
    section = DOCS.read_text().split("## Owners and access rules")[1]
    policy = json.loads(section.split("```json\n")[1].split("```")[0])
    private = section.split('extra_body={"access_rules": [\n')[1].split("\n]})")[0]

    assert seen(db, policy, CAROL) == EVERYTHING  # an auditor
    assert seen(db, policy, BOB) == {"resp_ada", "resp_bob"}  # Ada's group
    assert seen(db, policy, Viewer("user-dan")) == set()
    assert seen(db, policy, BOB, "delete") == {"resp_bob"}
    assert seen(db, [json.loads(private.strip().rstrip(","))], ADA) == {"resp_ada"}
