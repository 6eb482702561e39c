"""Every item kind is told to a chat backend and read in a compaction transcript: by its
server tool's :class:`~agentloom.tools.items.ToolItem`, or by the loop's own tables."""

from __future__ import annotations

import typing

from agentloom.api.items import StoredItem
from agentloom.engine import compaction, messages
from agentloom.tools.server_tools import TOOL_ITEMS


def _kinds() -> set[str]:
    union = typing.get_args(StoredItem)[0]
    models = [typing.get_args(member)[0] for member in typing.get_args(union)]
    return {str(model.model_fields["type"].default) for model in models}


def test_each_kind_is_defined_once_for_the_chat() -> None:
    own = set(messages._ADDERS)
    assert own.isdisjoint(TOOL_ITEMS)
    assert own | set(TOOL_ITEMS) == _kinds()


def test_each_kind_has_a_transcript_line() -> None:
    own = set(compaction._LINES)
    assert own.isdisjoint(TOOL_ITEMS)
    assert own | set(TOOL_ITEMS) == _kinds()


def test_server_tool_items_name_their_kind() -> None:
    assert set(TOOL_ITEMS) == {"file_search_call", "web_search_call", "code_interpreter_call"}
    assert all(item.type == kind for kind, item in TOOL_ITEMS.items())
