"""Every integer a request carries is bounded by what stores it (:mod:`agentloom.api.integers`):
checked on the OpenAPI document, which is made from the very models the server validates with,
so a new field or query parameter without bounds fails here, and so does a new integer column
until it names the request values it takes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa

from agentloom.api.integers import INT32_MAX, INT64_MAX
from agentloom.config import Settings
from agentloom.server.app import create_app
from agentloom.server.openapi import document
from agentloom.storage import schema

Schema = dict[str, Any]
Bounds = tuple[int | None, int | None]

# Every integer column, and the request values written into it or searched by, each named by
# its place in the document: "Model.field" (a field of a request body's model) or
# "METHOD /path?name" (a query parameter). Columns the server alone counts take none.
TAKES: dict[str, tuple[str, ...]] = {
    "rate_limits.max_requests_per_1_minute": ("UpdateRateLimitRequest.max_requests_per_1_minute",),
    "rate_limits.max_tokens_per_1_minute": ("UpdateRateLimitRequest.max_tokens_per_1_minute",),
    "rate_limits.max_requests_per_1_day": ("UpdateRateLimitRequest.max_requests_per_1_day",),
    "containers.expires_minutes": ("ContainerExpiry.minutes",),
    "batches.output_expires_after": ("CreateBatchRequest.output_expires_after",),
    "spend_limits.threshold_amount": ("UpdateSpendLimitRequest.threshold_amount",),
    "spend_alerts.threshold_amount": ("CreateSpendAlertRequest.threshold_amount",),
    "prompts.version": (
        "PromptParam.version",
        "UpdatePromptRequest.version",
        "SetDefaultVersionRequest.version",
        "GET /v1/prompts/{prompt_id}?version",
    ),
    "response_events.sequence_number": (
        "GET /v1/responses/{response_id}?starting_after",
        "GET /v1/managed-agents/{managed_agent_id}/runs/{run_id}?starting_after",
    ),
    "usage_records.minute": tuple(
        f"GET /v1/organization/usage/{report}?{name}"
        for report in (
            "completions",
            "embeddings",
            "file_search_calls",
            "web_search_calls",
            "code_interpreter_sessions",
        )
        for name in ("start_time", "end_time")
    ),
}
COUNTED = {  # written by the server only: row keys, positions, counters, tokens, versions
    *(f"{t.name}.seq" for t in schema.metadata.sorted_tables if "seq" in t.columns),
    *("agent_ticks.id", "agent_ticks.number", "auth_state.id", "auth_state.epoch"),
    *("conversations.version", "files.bytes", "instances.pid", "jobs.attempts"),
    *("managed_agent_runs.input_tokens", "managed_agent_runs.output_tokens"),
    *("managed_agents.total_runs", "managed_agents.input_tokens", "managed_agents.output_tokens"),
    *("memories.id", "rate_windows.start", "rate_windows.requests", "rate_windows.tokens"),
    *("schedules.runs", "vector_stores.dimensions", "vector_stores.epoch"),
    *("items.kind", "items.position", "vector_store_chunks.position"),
    *("vector_store_files.usage_bytes", "vector_store_files.attempts"),
    *("vector_store_files.chunks_total", "vector_store_files.chunks_embedded"),
    *(f"usage_records.{name}" for name in ("requests", "input_tokens", "cached_tokens")),
    *(f"usage_records.{name}" for name in ("output_tokens", "reasoning_tokens", "mcp_calls")),
    *(f"usage_records.{name}" for name in ("file_search_calls", "web_search_calls")),
    *(f"usage_records.{n}" for n in ("code_interpreter_sessions", "embedding_requests")),
    "usage_records.embedding_tokens",
    *(f"batches.{name}" for name in ("total", "completed", "failed", "input_tokens")),
    *(f"batches.{name}" for name in ("cached_tokens", "output_tokens", "reasoning_tokens")),
    "batch_results.line",
    *(f"request_log.{n}" for n in ("input_tokens", "cached_tokens", "output_tokens", "cost")),
    "request_log.status",
    *("spend_alerts.fired_period", "spend_totals.period", "spend_totals.amount"),
    *(f"usage_records.{n}" for n in ("moderation_requests", "moderation_tokens")),
    *(f"usage_records.cost_{n}" for n in ("input", "cached", "output", "embeddings")),
}
RANGES = {  # what each column type holds on PostgreSQL (SQLite's INTEGER holds 64 bits)
    sa.SmallInteger: (-(2**15), 2**15 - 1),
    sa.Integer: (-INT32_MAX - 1, INT32_MAX),
    sa.BigInteger: (-INT64_MAX - 1, INT64_MAX),
}


@pytest.fixture(scope="module")
def openapi() -> Schema:
    return document(create_app(Settings()).routes)


def integer_columns() -> dict[str, sa.Column[Any]]:
    return {
        f"{table.name}.{column.name}": column
        for table in schema.metadata.sorted_tables
        for column in table.columns
        if isinstance(column.type, sa.Integer)
    }


def integers(
    node: object, components: Schema, seen: frozenset[str] = frozenset()
) -> Iterator[Schema]:
    """Every integer schema within ``node``, following ``$ref`` s (each once a path)."""
    if isinstance(node, list):
        for item in node:
            yield from integers(item, components, seen)
        return
    if not isinstance(node, dict):
        return
    ref = node.get("$ref")
    if isinstance(ref, str) and ref not in seen:
        yield from integers(components[ref.rsplit("/", 1)[-1]], components, seen | {ref})
    kinds = node.get("type")
    if kinds == "integer" or (isinstance(kinds, list) and "integer" in kinds):
        yield node
    for key, value in node.items():
        if key not in ("$ref", "default", "examples", "example", "const", "enum"):
            yield from integers(value, components, seen)


def requests(openapi: Schema) -> Iterator[tuple[str, object]]:
    """Each operation's request body and parameters, named by operation."""
    for path, operations in openapi["paths"].items():
        for method, operation in operations.items():
            name = f"{method.upper()} {path}"
            for content in operation.get("requestBody", {}).get("content", {}).values():
                yield f"{name} body", content.get("schema")
            for parameter in operation.get("parameters", []):
                yield f"{name}?{parameter['name']}", parameter.get("schema")


def bounds(integer: Schema) -> Bounds:
    low = integer.get("minimum", _plus(integer.get("exclusiveMinimum"), 1))
    high = integer.get("maximum", _plus(integer.get("exclusiveMaximum"), -1))
    return low, high


def _plus(value: int | None, step: int) -> int | None:
    return None if value is None else value + step


def declared(openapi: Schema, where: str) -> list[Bounds]:
    """The bounds of the request value named ``where`` (see :data:`TAKES`)."""
    components = openapi["components"]["schemas"]
    if "?" in where:
        route, name = where.split("?")
        method, path = route.split(" ")
        parameters = openapi["paths"][path][method.lower()]["parameters"]
        found: object = next(p["schema"] for p in parameters if p["name"] == name)
    else:
        model, field = where.split(".")
        found = components[model]["properties"][field]
    return [bounds(integer) for integer in integers(found, components)]


def test_every_integer_a_request_carries_has_bounds_within_64_bits(openapi: Schema) -> None:
    components = openapi["components"]["schemas"]
    unbounded = [
        (where, bounds(integer))
        for where, node in requests(openapi)
        for integer in integers(node, components)
        if not _within(bounds(integer), RANGES[sa.BigInteger])
    ]

    assert unbounded == []


def test_every_integer_column_names_the_request_values_it_takes() -> None:
    columns = set(integer_columns())

    assert sorted(columns - set(TAKES) - COUNTED) == []  # a new column: say what it takes
    assert sorted((set(TAKES) | COUNTED) - columns) == []
    assert set(TAKES) & COUNTED == set()


@pytest.mark.parametrize("column", sorted(TAKES))
def test_what_a_column_takes_is_within_its_range(openapi: Schema, column: str) -> None:
    kind = type(integer_columns()[column].type)
    held = RANGES[kind]

    for where in TAKES[column]:
        found = declared(openapi, where)
        assert found, where  # it is an integer of the document
        assert all(_within(b, held) for b in found), (where, found, held)


def _within(found: Bounds, held: tuple[int, int]) -> bool:
    low, high = found
    return low is not None and high is not None and held[0] <= low and high <= held[1]
