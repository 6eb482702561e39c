import re

from agentloom.ids import new_id


def test_ids_are_prefixed_hex_and_unique() -> None:
    ids = [new_id("resp") for _ in range(5000)]  # spans many refills of the random pool
    assert all(re.fullmatch(r"resp_[0-9a-f]{48}", i) for i in ids)
    assert len(set(ids)) == len(ids)
