"""The one table from routes to scopes (agentloom.auth.scopes): what each request needs, and
what a set of scopes grants."""

from __future__ import annotations

import pytest

from agentloom.auth.scopes import SCOPES, grants, needed_scope, scopes_of
from agentloom.errors import InvalidRequestError


@pytest.mark.parametrize(
    ("method", "path", "needed"),
    [
        ("GET", "/v1/models", "api.model.read"),
        ("GET", "/v1/models/org/model", "api.model.read"),
        ("POST", "/v1/embeddings", "api.model.request"),
        ("POST", "/v1/chat/completions", "api.model.request"),
        ("GET", "/v1/chat/completions/chatcmpl-1", "api.chat.completions.read"),
        ("DELETE", "/v1/chat/completions/chatcmpl-1", "api.chat.completions.write"),
        ("POST", "/v1/responses", "api.responses.write"),
        ("POST", "/v1/agents/responses", "api.responses.write"),
        ("HEAD", "/v1/responses/resp_1/input_items", "api.responses.read"),
        ("POST", "/v1/vector_stores/vs_1/search", "api.vector_stores.read"),
        ("POST", "/v1/vector_stores/vs_1/files", "api.vector_stores.write"),
        ("DELETE", "/v1/files/file-1", "api.files.write"),
        ("PATCH", "/v1/managed-agents/a/tasks/t", "api.managed_agents.write"),
        ("POST", "/v1/safety/run-shield", "api.model.request"),
        ("GET", "/v1/webhook_event_types", "api.webhooks.read"),
        ("GET", "/v1/requests/summary", "api.requests.read"),
        ("DELETE", "/v1/requests/req_1", "api.all.write"),  # a group only read
        ("GET", "/v1/unlisted", "api.all.read"),  # a route the table does not name
        ("POST", "/v1/agents", "api.all.write"),
        ("GET", "/v1/filesystem", "api.all.read"),  # a prefix is whole segments
    ],
)
def test_each_request_needs_its_groups_scope(method: str, path: str, needed: str) -> None:
    assert needed_scope(method, path) == needed


@pytest.mark.parametrize(
    ("held", "needed", "granted"),
    [
        (None, "api.files.write", True),  # no scopes: every permission
        ({"api.files.read"}, "api.files.read", True),
        ({"api.files.read"}, "api.files.write", False),
        ({"api.files.write"}, "api.files.read", True),  # write grants read
        ({"api.model.request"}, "api.model.read", True),
        ({"api.all.read"}, "api.vector_stores.read", True),
        ({"api.all.read"}, "api.vector_stores.write", False),
        ({"api.all.write"}, "api.model.request", True),
        ({"api.all.read"}, "api.requests.read", True),
        ({"api.requests.read"}, "api.all.read", False),
        (set(), "api.model.read", False),  # a role with no permissions grants nothing
    ],
)
def test_what_scopes_grant(held: set[str] | None, needed: str, granted: bool) -> None:
    assert grants(None if held is None else frozenset(held), needed) is granted


def test_scopes_asked_for_are_checked() -> None:
    assert scopes_of(None) is None
    assert scopes_of([]) is None  # an empty list lifts the restriction, as at OpenAI
    assert scopes_of(["api.files.read"]) == frozenset({"api.files.read"})
    with pytest.raises(InvalidRequestError) as refused:
        scopes_of(["api.files.read", "api.files.delete"])
    assert refused.value.param == "scopes"
    assert "api.files.delete" in str(refused.value)
    assert {"api.all.read", "api.all.write", "api.model.request", "api.requests.read"} <= SCOPES
    assert "api.requests.write" not in SCOPES  # nothing there changes
