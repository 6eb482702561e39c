"""A routed or renamed model's streamed chunks get the client's model id written back without
being decoded (:func:`agentloom.services.gateway.chat._renamed`), and only where that is sure."""

from __future__ import annotations

import json

import pytest

from agentloom.services.gateway.chat import _renamed


@pytest.mark.parametrize(
    "event",
    [
        '{"id":"c1","object":"chat.completion.chunk","model":"upstream","choices":[]}',
        '{"id":"c1","model":"up","choices":[{"delta":{"content":"x"}}],"usage":null}',
        '{"id": "c1", "model": "upstream", "choices": []}',  # as Python's json.dumps writes
        '{"id":"say \\"model\\":\\"no\\"","model":"upstream"}',  # the key, not the text
    ],
)
def test_the_top_level_model_is_replaced_and_the_rest_kept(event: str) -> None:
    renamed = _renamed(event, '"model":"team/\\"chat\\""')

    assert renamed is not None
    assert json.loads(renamed) == {**json.loads(event), "model": 'team/"chat"'}


@pytest.mark.parametrize(
    "event",
    [
        '{"id":"c1","choices":[{"model":"inner"}],"model":"upstream"}',  # nested first
        '{"id":"{","model":"upstream"}',  # unsure: a brace before it, if only in a string
        '{"id":"c1","choices":[]}',  # no model at all
        '{"id":"c1", "model" : "upstream"}',  # a space before the colon
        '{"id":"c1","model":null}',  # not a string
        '{"id":"c1","model":"up\\"stream"}',  # an escaped quote in the old id
        '["model"]',
    ],
)
def test_anything_unsure_is_left_to_decoding(event: str) -> None:
    assert _renamed(event, '"model":"chat"') is None
