"""What each project used: recorded when a response ends, summed for ``/organization/usage``.

Recording costs a dictionary update on the response's path: the counts priced
(:class:`~agentloom.services.organization.prices.Prices`, the one place a cost is made) and
added to the minute's, and to the running request's log entry
(:mod:`agentloom.request_entry`). The ledger adds what it gathered to the database every
``flush_interval`` (and when the server stops): one row per minute, project, key and model,
each project's month of spend, and the request log's rows of the requests answered since. A
process killed without warning loses at most that interval's usage and log.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

import anyio

from agentloom.api.items import OutputItem
from agentloom.api.response import Response
from agentloom.inference.base import Usage
from agentloom.metrics import Metrics
from agentloom.request_entry import RequestEntry, current_entry
from agentloom.services.organization.prices import Prices
from agentloom.services.organization.rate_limits import RateLimiter
from agentloom.storage.connection_faults import DATABASE_FAULTS
from agentloom.storage.request_log import SqlRequestLogStore
from agentloom.storage.usage import SqlUsageStore, UsageCounts, UsageKey
from agentloom.tenancy import current_key, current_project

log = logging.getLogger(__name__)

MAX_PENDING_ENTRIES = 100_000  # request log rows kept while the database cannot take them

_CALLS = {
    "file_search_call": "file_search_calls",
    "web_search_call": "web_search_calls",
    "mcp_call": "mcp_calls",
}


class UsageLedger:
    def __init__(
        self,
        store: SqlUsageStore,
        limiter: RateLimiter,
        metrics: Metrics | None = None,
        *,
        prices: Prices | None = None,
        log: SqlRequestLogStore | None = None,
    ) -> None:
        self._store = store
        self._limiter = limiter
        self._metrics = metrics
        self._prices = Prices({}) if prices is None else prices
        self._log = log
        self._pending: dict[UsageKey, UsageCounts] = {}
        self._entries: list[RequestEntry] = []

    def log(self, entry: RequestEntry) -> None:
        """Keep a request's row for the next flush (none without a request log)."""
        if self._log is not None:
            self._entries.append(entry)

    def record(self, response: Response, *, model_calls: int) -> None:
        """Count a response that ended (whatever its status)."""
        counts = counts_of(response.output, model_calls)
        usage = response.usage
        if usage is not None:
            counts.input_tokens = usage.input_tokens
            counts.cached_tokens = usage.input_tokens_details.cached_tokens
            counts.output_tokens = usage.output_tokens
            counts.reasoning_tokens = usage.output_tokens_details.reasoning_tokens
        self._add(response.model, counts)
        entry = current_entry()
        if entry is not None:
            entry.response_id = response.id
            entry.user = response.user or response.safety_identifier
            if response.error is not None:
                entry.error_code = response.error.code
        if self._metrics is not None:
            self._metrics.response_ended(response.model, response.status or "completed")

    def record_call(self, model: str, usage: Usage | None) -> None:
        """Count one model call a client made directly (Chat Completions passed through)."""
        counts = UsageCounts(requests=1)
        if usage is not None:
            counts.input_tokens = usage.input_tokens
            counts.cached_tokens = usage.cached_tokens
            counts.output_tokens = usage.output_tokens
            counts.reasoning_tokens = usage.reasoning_tokens
        self._add(model, counts)

    def _add(self, model: str, counts: UsageCounts) -> None:
        """Counts of the running work's project and key, under this minute; their tokens are
        spent under the project's token limits."""
        self._prices.price(model, counts)
        minute = int(time.time()) // 60 * 60
        key = UsageKey(minute, current_project(), current_key(), model)
        self._pending.setdefault(key, UsageCounts()).add(counts)
        entry = current_entry()
        if entry is not None:
            _note(entry, model, counts)
        if self._metrics is not None:
            self._metrics.counted(model, counts)
        if counts.input_tokens or counts.output_tokens:
            self._limiter.spend(model, counts.input_tokens + counts.output_tokens)

    async def flush(self) -> None:
        """Add what was gathered to the database (kept for the next try if that fails), and
        the tokens spent under token limits to the shared rate counts."""
        await self._limiter.flush()
        pending, self._pending = self._pending, {}
        try:
            await self._store.add(list(pending.items()))
        except BaseException:
            for key, counts in pending.items():
                self._pending.setdefault(key, UsageCounts()).add(counts)
            raise
        entries, self._entries = self._entries, []
        if self._log is not None:
            try:
                await self._log.add(entries)
            except BaseException:
                self._entries[:0] = entries[-MAX_PENDING_ENTRIES:]  # the newest kept for later
                raise

    async def run(self, interval: float) -> None:
        """Flush every ``interval`` seconds for the life of the server, and once at the end."""
        try:
            while True:
                await anyio.sleep(interval)
                try:
                    await self.flush()
                except DATABASE_FAULTS:
                    log.warning("could not record usage; retrying", exc_info=True)
        finally:
            with anyio.CancelScope(shield=True):
                await self.flush()

    def record_embeddings(self, model: str, tokens: int) -> None:
        """Count an embeddings request of ``tokens`` input tokens (the embeddings report's,
        apart from model calls), spent under the project's token limits."""
        self._add(model, UsageCounts(embedding_requests=1, embedding_tokens=tokens))
        self._limiter.spend(model, tokens)

    def record_moderation(self, model: str, tokens: int) -> None:
        """Count a moderations request of ``tokens`` input tokens (estimated) by ``model``."""
        self._add(model, UsageCounts(moderation_requests=1, moderation_tokens=tokens))


def _note(entry: RequestEntry, model: str, counts: UsageCounts) -> None:
    """What a request used, on its log entry (a request may call models more than once)."""
    entry.model = model
    entry.input_tokens += counts.input_tokens + counts.embedding_tokens + counts.moderation_tokens
    entry.cached_tokens += counts.cached_tokens
    entry.output_tokens += counts.output_tokens
    entry.cost += counts.cost


def counts_of(output: Sequence[OutputItem], model_calls: int) -> UsageCounts:
    counts = UsageCounts(requests=model_calls)
    containers = set()
    for item in output:
        name = _CALLS.get(item.type)
        if name is not None:
            setattr(counts, name, getattr(counts, name) + 1)
        elif item.type == "code_interpreter_call":
            containers.add(getattr(item, "container_id", None))
    counts.code_interpreter_sessions = len(containers)
    return counts
