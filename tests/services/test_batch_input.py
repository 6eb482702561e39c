"""A batch's input file read line by line, and the tokens of each endpoint's usage."""

from __future__ import annotations

import json

from agentloom.batches.dispatch import tokens_of
from agentloom.batches.input import MAX_ERRORS, read_input
from agentloom.storage.batch_api import Tokens

URL = "/v1/chat/completions"


def _lines(count: int, **body: object) -> bytes:
    rows = [
        {"custom_id": f"r{i}", "method": "POST", "url": URL, "body": {"model": "m", **body}}
        for i in range(count)
    ]
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def test_good_lines_are_requests_numbered_from_one_blank_lines_skipped() -> None:
    read = read_input(b"\n" + _lines(2), URL, max_requests=10)

    assert read.errors == []
    assert [(r.line, r.custom_id) for r in read.requests] == [(2, "r0"), (3, "r1")]
    assert read.model == "m"


def test_an_empty_file_and_one_too_long_are_refused() -> None:
    assert [e.code for e in read_input(b"\n\n", URL, max_requests=10).errors] == ["empty_file"]
    too_many = read_input(_lines(3), URL, max_requests=2)
    assert [e.code for e in too_many.errors] == ["too_many_requests"]


def test_errors_stop_at_the_first_hundred() -> None:
    read = read_input(b"[]\n" * (MAX_ERRORS + 50), URL, max_requests=10)

    assert len(read.errors) == MAX_ERRORS
    assert {e.code for e in read.errors} == {"invalid_json_line"}


def test_a_lowercase_post_is_a_post_and_a_get_is_refused() -> None:
    get = json.dumps({"custom_id": "g", "method": "GET", "url": URL, "body": {"model": "m"}})
    post = json.dumps({"custom_id": "p", "method": "post", "url": URL, "body": {"model": "m"}})

    read = read_input(f"{get}\n{post}\n".encode(), URL, max_requests=10)

    assert [(e.line, e.code) for e in read.errors] == [(1, "invalid_method")]


def test_tokens_are_read_from_each_endpoints_usage() -> None:
    responses = {
        "input_tokens": 5,
        "output_tokens": 7,
        "input_tokens_details": {"cached_tokens": 2},
        "output_tokens_details": {"reasoning_tokens": 3},
    }
    chat = {
        "prompt_tokens": 4,
        "completion_tokens": 6,
        "completion_tokens_details": {"reasoning_tokens": 1},
    }

    assert tokens_of(responses) == Tokens(5, 2, 7, 3)
    assert tokens_of(chat) == Tokens(4, 0, 6, 1)
    assert tokens_of({"prompt_tokens": 9, "total_tokens": 9}) == Tokens(9, 0, 0, 0)
    assert tokens_of(None) == Tokens()
