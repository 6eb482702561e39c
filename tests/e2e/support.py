"""Helpers shared by the end-to-end tests."""

from __future__ import annotations

from typing import Any, cast

from agentloom.testing.backend import FakeBackend


def received(backend: FakeBackend) -> list[dict[str, Any]]:
    """The chat request bodies the fake backend received, for indexing without casts."""
    return cast("list[dict[str, Any]]", backend.requests)


def last_received(backend: FakeBackend) -> dict[str, Any]:
    return cast("dict[str, Any]", backend.last_request)
