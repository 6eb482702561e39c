"""A batch's input file, read and checked: one JSON request a line, ``{custom_id, method, url,
body}``, each to the batch's endpoint, with a model, under a ``custom_id`` no other line has.

What is wrong is listed by line (1-based, as OpenAI numbers them) in the batch's ``errors``, the
first :data:`MAX_ERRORS` of it; a file with any error runs nothing.
"""

from __future__ import annotations

import json

from pydantic import ValidationError

from agentloom.api.batches import BatchError, InputLine
from agentloom.frozen import frozen

MAX_ERRORS = 100


@frozen
class BatchRequest:
    line: int  # 1-based
    custom_id: str
    body: dict[str, object]


@frozen
class Input:
    requests: list[BatchRequest]
    errors: list[BatchError]

    @property
    def model(self) -> str | None:
        """The model of the first request (what the batch reports)."""
        return str(self.requests[0].body["model"]) if self.requests else None


def read_input(data: bytes, endpoint: str, max_requests: int) -> Input:
    requests: list[BatchRequest] = []
    errors: list[BatchError] = []
    seen: set[str] = set()
    for number, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        checked = _checked(raw, number, endpoint, seen)
        if isinstance(checked, BatchError):
            errors.append(checked)
        else:
            seen.add(checked.custom_id)
            requests.append(checked)
        if len(errors) >= MAX_ERRORS:
            break
    errors.extend(_overall(requests, errors, max_requests))
    return Input(requests, errors)


def _overall(
    requests: list[BatchRequest], errors: list[BatchError], max_requests: int
) -> list[BatchError]:
    if not requests and not errors:
        return [BatchError(code="empty_file", message="The input file has no requests.")]
    if len(requests) > max_requests:
        message = f"The input file has {len(requests)} requests; a batch takes {max_requests}."
        return [BatchError(code="too_many_requests", message=message)]
    return []


def _checked(raw: bytes, number: int, endpoint: str, seen: set[str]) -> BatchRequest | BatchError:
    try:
        line = InputLine.model_validate(_decoded(raw))
    except ValidationError as exc:  # (a ValueError too: first)
        first = exc.errors(include_url=False)[0]
        param = ".".join(str(part) for part in first["loc"])
        return _error(number, "invalid_request", f"'{param}': {first['msg']}.", param)
    except ValueError:
        return _error(number, "invalid_json_line", "This line is not a JSON object.")
    return _request(line, number, endpoint, seen)


def _decoded(raw: bytes) -> dict[str, object]:
    value = json.loads(raw)
    if not isinstance(value, dict):
        raise ValueError("not an object")
    return value


def _request(
    line: InputLine, number: int, endpoint: str, seen: set[str]
) -> BatchRequest | BatchError:
    if line.method.upper() != "POST":
        return _error(number, "invalid_method", "A batch's requests are POSTs.", "method")
    if line.url != endpoint:
        message = f"The url '{line.url[:100]}' is not the batch's endpoint, '{endpoint}'."
        return _error(number, "mismatched_endpoint", message, "url")
    if line.custom_id in seen:
        message = f"The custom_id '{line.custom_id[:100]}' is on an earlier line too."
        return _error(number, "duplicate_custom_id", message, "custom_id")
    model = line.body.get("model")
    if not isinstance(model, str) or not model:
        return _error(number, "missing_model", "The request has no model.", "body.model")
    return BatchRequest(number, line.custom_id, line.body)


def _error(number: int, code: str, message: str, param: str | None = None) -> BatchError:
    return BatchError(code=code, line=number, message=message, param=param)
