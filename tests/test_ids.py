import re
import time

from agentloom.ids import new_id


def test_ids_are_prefixed_hex_and_unique() -> None:
    ids = [new_id("resp") for _ in range(5000)]  # spans many refills of the random pool
    assert all(re.fullmatch(r"resp_[0-9a-f]{48}", i) for i in ids)
    assert len(set(ids)) == len(ids)


def test_ids_start_with_their_creation_time() -> None:
    before = time.time()
    ids = [new_id("msg") for _ in range(2000)]
    after = time.time()
    seconds = [int(i[4:16], 16) / 65536 for i in ids]
    assert all(before - 1 / 65536 <= s <= after for s in seconds)
    assert [i[4:16] for i in ids] == sorted(i[4:16] for i in ids)  # they grow with time
    assert len({i[16:] for i in ids}) == len(ids)  # and the rest is random
