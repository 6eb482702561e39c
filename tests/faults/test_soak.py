"""A bounded soak (``bench.soak``): one ``agentloom serve`` process, the fast fake backend, 32
connections at once sending 2,000 exchanges of a mix (stored and streamed responses, function
tool round trips, conversation turns, file_search over a small vector store) after a warm-up,
on SQLite and PostgreSQL.

No error; and the process holds what the warm-up made it hold: resident memory within a
generous bound, open file descriptors, threads, database sessions and event-loop tasks (read
from ``GET /metrics``) as before, give or take what bounded pools open lazily. ``python -m
bench.soak`` runs it as a benchmark (measured there: RSS grows about 6 MiB over the first 2,000
exchanges, 1 MiB over the next 2,000).
"""

from __future__ import annotations

import pytest
from bench.soak import describe, measure

pytestmark = pytest.mark.both_databases  # what these check depends on the storage

EXCHANGES = 2000
CLIENTS = 32
WARMUP = 300
RSS_GROWTH = 50 * 1024 * 1024  # bytes: far above what caches warming up take (about 6 MiB)
# What pools open lazily, up to a bound: the provider's keep-alive connections to the backend
# grow to the most model calls made at once (a client's at most), worker threads to the most
# blocking calls at once (a search or an upload a client at most: seen 19 -> 32 threads once,
# when the warm-up had not met 32 searches at once); database sessions to the pools' sizes. A
# leak of one a request would be thousands.
FDS_SLACK = CLIENTS
THREADS_SLACK = CLIENTS
SESSIONS_SLACK = 4
TASKS_SLACK = 4  # the event loop's: background duties are fixed, requests' end with them


def test_thousands_of_mixed_requests_without_an_error_or_a_leak(database_url: str) -> None:
    result = measure(database_url, requests=EXCHANGES, clients=CLIENTS, warmup=WARMUP)
    print(describe(result))

    assert result.errors == 0, result.first_errors
    assert result.requests >= EXCHANGES
    assert result.rss_growth < RSS_GROWTH
    assert result.after.fds <= result.before.fds + FDS_SLACK
    assert result.after.threads <= result.before.threads + THREADS_SLACK
    assert result.after.tasks <= result.before.tasks + TASKS_SLACK
    if result.before.sessions is not None:
        assert result.after.sessions is not None
        assert result.after.sessions <= result.before.sessions + SESSIONS_SLACK
        assert result.after.sessions <= 3 * 20 + 1  # [database] pool_size 20: 3 pools, listener
