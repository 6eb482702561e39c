"""Sealing keys: one shared key per database, however many servers start at once; seals that
only this server's keys open, for the purpose they were made for."""

from __future__ import annotations

import asyncio

import pytest

from agentloom.sealing import Sealer, SealError, SealingKey
from agentloom.storage.database import Database
from agentloom.storage.keys import sealing_keys


async def test_servers_starting_together_share_one_key(database_url: str) -> None:
    databases = [await Database.connect(database_url, instance_id=f"inst_{n}") for n in range(4)]
    try:
        await databases[0].migrate()
        found = await asyncio.gather(*(sealing_keys(db.runner) for db in databases))
    finally:
        for db in databases:
            await db.aclose()

    assert all(keys == found[0] for keys in found)
    assert len(found[0]) == 1
    sealed = Sealer(found[1]).seal("compaction", b"shared")
    assert Sealer(found[3]).open("compaction", sealed) == b"shared"


async def test_the_key_outlives_a_restart(database: Database) -> None:
    first = await sealing_keys(database.runner)
    again = await sealing_keys(database.runner)

    assert first == again


def test_seal_and_open() -> None:
    sealer = Sealer([SealingKey.new()])
    sealed = sealer.seal("compaction", b"secret summary")

    assert b"secret" not in sealed.encode()
    assert sealed.startswith("al1.")
    assert sealer.open("compaction", sealed) == b"secret summary"
    assert sealer.seal("compaction", b"x") != sealer.seal("compaction", b"x")  # fresh nonces


@pytest.mark.parametrize(
    "change",
    [
        lambda s: s[:-2] + ("AA" if not s.endswith("AA") else "BB"),  # the ciphertext
        lambda s: s.replace("al1.", "al2.", 1),  # the format
        lambda s: s.split(".")[0] + ".0123456789abcdef." + s.split(".")[2],  # another key id
        lambda s: s + "!",  # not base64
        lambda s: "",
    ],
)
def test_changed_content_is_refused(change: object) -> None:
    sealer = Sealer([SealingKey.new()])
    sealed = sealer.seal("compaction", b"summary")

    with pytest.raises(SealError):
        sealer.open("compaction", change(sealed))  # type: ignore[operator]


def test_content_sealed_for_one_purpose_does_not_open_for_another() -> None:
    sealer = Sealer([SealingKey.new()])

    with pytest.raises(SealError):
        sealer.open("reasoning", sealer.seal("compaction", b"summary"))


def test_old_keys_still_open_after_a_new_one_takes_over() -> None:
    old = SealingKey.new()
    sealed = Sealer([old]).seal("compaction", b"before")

    assert Sealer([SealingKey.new(), old]).open("compaction", sealed) == b"before"
    with pytest.raises(SealError):
        Sealer([SealingKey.new()]).open("compaction", sealed)


def test_configured_keys() -> None:
    key = SealingKey.new()

    assert SealingKey.from_text(key.text()) == key
    with pytest.raises(ValueError, match="32 bytes"):
        SealingKey.from_text("c2hvcnQ")
    with pytest.raises(ValueError, match="base64"):
        SealingKey.from_text("not base64 at all!")
