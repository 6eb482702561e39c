"""Uploads over a real socket: a file round-trips byte for byte, and an upload over the limit
gets its 413 while the client is still sending."""

from __future__ import annotations

import openai
import pytest

from agentloom.config import Settings


async def test_upload_and_download_over_a_socket(live_client: openai.AsyncOpenAI) -> None:
    data = bytes(range(256)) * 4096  # 1 MiB of binary

    created = await live_client.files.create(file=("blob.bin", data), purpose="user_data")
    content = await live_client.files.content(created.id)

    assert content.content == data
    assert content.response.headers["content-type"] == "application/octet-stream"


async def test_an_upload_over_the_limit_is_a_413_over_a_socket(
    live_client: openai.AsyncOpenAI, settings: Settings
) -> None:
    data = b"x" * (settings.files.max_bytes + 4 * 1024 * 1024)

    with pytest.raises(openai.APIStatusError) as raised:
        await live_client.files.create(file=("big.txt", data), purpose="assistants")

    assert raised.value.status_code == 413
    assert (await live_client.files.list()).data == []
