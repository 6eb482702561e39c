"""Vector stores: the Vector Stores API and the search the ``file_search`` tool uses.

A store is embedded by one model: the embedder configured when it was created. Searching it
(by vector or hybrid) or adding files with another embedder configured is a 409, since its
vectors and the new ones would not compare. Keyword search works whatever the embedder.

Files are ingested by durable jobs (:mod:`agentloom.services.vector_stores.ingestion`); searches use
in-memory indexes kept current with the database
(:mod:`agentloom.services.vector_stores.index_cache`).
Searching or adding files marks a store active (``last_active_at``, at most once a minute),
which moves its expiry when it has an ``expires_after`` policy; an expired store takes no
search and no file, and can still be read, updated and deleted.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Sequence

import anyio
import numpy as np
from numpy.typing import NDArray

from agentloom.api.filters import Filter
from agentloom.api.lists import ListPage
from agentloom.api.vector_store_search import (
    RankingOptions,
    SearchContent,
    SearchRequest,
    SearchResultItem,
    SearchResultsPage,
)
from agentloom.api.vector_stores import (
    BatchFile,
    CreateVectorStoreRequest,
    UpdateVectorStoreRequest,
    VectorStore,
    VectorStoreDeleted,
)
from agentloom.config import VectorStoreSettings
from agentloom.errors import (
    ConflictError,
    InternalError,
    InvalidRequestError,
    NotFoundError,
    UpstreamTimeoutError,
)
from agentloom.ids import new_id
from agentloom.retrieval.embeddings import Embedder
from agentloom.retrieval.index import SearchMode, Weights
from agentloom.retrieval.vector_index import IndexOptions
from agentloom.services.files import FilesService
from agentloom.services.vector_stores.files import VectorStoreFiles, store_not_found
from agentloom.services.vector_stores.index_cache import IndexCache
from agentloom.services.vector_stores.ingestion import IngestionObserver, Ingestor
from agentloom.services.vector_stores.objects import expired, expiry, policy_of, store_object
from agentloom.services.vector_stores.query_rewrite import rewrite_query
from agentloom.services.vector_stores.search import Search, SearchResult, VectorSearch
from agentloom.storage.connection_faults import DATABASE_FAULTS
from agentloom.storage.database import Database
from agentloom.storage.vector_stores_base import (
    Cursor,
    FileCounts,
    IndexState,
    StoreChanges,
    StoreRow,
    StoreState,
)
from agentloom.tenancy import acting_for

__all__ = ["SearchResult", "VectorStoresService"]

log = logging.getLogger(__name__)

ACTIVE_EVERY = 60.0  # seconds: how often a store in use records its last_active_at


class VectorStoresService:
    def __init__(
        self,
        database: Database,
        files: FilesService,
        embedder: Embedder,
        settings: VectorStoreSettings,
        *,
        instance_id: str,
        nudge: Callable[[], None],
        on_ingested: IngestionObserver | None = None,
    ) -> None:
        """``nudge``: this process's job runner has work (files to ingest were queued);
        ``on_ingested``: told of each file ingested (:class:`Ingestor`)."""
        self._stores = database.vector_stores
        self._chunks = database.vector_chunks
        self._embedder = embedder
        self._space: tuple[str, int] | None = None
        self.settings = settings
        self.cache = IndexCache(
            self._chunks,
            max_chunks=settings.cache_chunks,
            options=IndexOptions(ann_threshold=settings.ann_threshold),
        )
        self.warmed = anyio.Event()  # set when :meth:`warm` is done
        self._search = VectorSearch(self._chunks, self.cache)
        self.ingestion = Ingestor(
            self._chunks, files, embedder, settings, instance_id, on_ingested=on_ingested
        )
        self._nudge = nudge
        self.files = VectorStoreFiles(
            self._stores, self._chunks, files, usable=self._usable, wake=nudge
        )

    # --- stores ------------------------------------------------------------------------------

    async def create(self, request: CreateVectorStoreRequest) -> VectorStore:
        now = time.time()
        store_id = new_id("vs")
        entries = [
            BatchFile(file_id=file_id, chunking_strategy=request.chunking_strategy)
            for file_id in request.file_ids or []
        ]
        params = [f"file_ids[{at}]" for at in range(len(entries))]
        files = await self.files.rows(store_id, entries, params=params)
        name, dimensions = await self._embedding_space()
        policy = request.expires_after
        row = StoreRow(
            id=store_id,
            created_at=now,
            name=request.name or "",
            metadata=json.dumps(request.metadata or {}),
            expires_after=None if policy is None else policy.model_dump_json(),
            expires_at=expiry(policy, now),
            last_active_at=now,
            embedder=name,
            dimensions=dimensions,
        )
        await self._stores.create(row, files)
        if files:
            self._nudge()
        return store_object(StoreState(row, FileCounts(in_progress=len(files))), now)

    async def list_stores(self, cursor: Cursor) -> ListPage[VectorStore]:
        page = await self._stores.list_page(cursor)
        now = time.time()
        data = [store_object(state, now) for state in page.data]
        return ListPage[VectorStore](
            data=data,
            first_id=data[0].id if data else None,
            last_id=data[-1].id if data else None,
            has_more=page.has_more,
        )

    async def get(self, store_id: str) -> VectorStore:
        return store_object(await self._state(store_id), time.time())

    async def update(self, store_id: str, request: UpdateVectorStoreRequest) -> VectorStore:
        row = (await self._state(store_id)).row
        given = request.model_fields_set
        policy = request.expires_after if "expires_after" in given else policy_of(row)
        changes = StoreChanges(
            name=row.name if request.name is None else request.name,
            metadata=row.metadata if request.metadata is None else json.dumps(request.metadata),
            expires_after=None if policy is None else policy.model_dump_json(),
            expires_at=expiry(policy, row.last_active_at),
        )
        state = await self._stores.update(store_id, changes)
        if state is None:
            raise store_not_found(store_id)
        return store_object(state, time.time())

    async def delete(self, store_id: str) -> VectorStoreDeleted:
        if not await self._stores.delete(store_id):
            raise store_not_found(store_id)
        self.cache.forget(store_id)
        return VectorStoreDeleted(id=store_id)

    # --- search ------------------------------------------------------------------------------

    async def search_page(self, store_id: str, request: SearchRequest) -> SearchResultsPage:
        """``POST /v1/vector_stores/{id}/search``."""
        queries = request.queries()
        if request.rewrite_query:
            queries = [rewrite_query(query) for query in queries]
        ranking = request.ranking_options or RankingOptions()
        results = await self.search(
            [store_id],
            queries,
            limit=request.max_num_results,
            filters=request.filters,
            score_threshold=ranking.score_threshold,
            mode=request.search_mode,
            weights=_weights(ranking),
            param="vector_store_id",
        )
        return SearchResultsPage(search_query=queries, data=[_item(r) for r in results])

    async def require(self, vector_store_ids: Sequence[str], *, param: str) -> None:
        """Raise a NotFoundError naming ``param`` unless every store exists."""
        for store_id in dict.fromkeys(vector_store_ids):
            if await self._chunks.index_state(store_id) is None:
                raise NotFoundError(f"No vector store found with id '{store_id}'.", param=param)

    async def search(
        self,
        vector_store_ids: Sequence[str],
        queries: Sequence[str],
        *,
        limit: int,
        filters: Filter | None = None,
        score_threshold: float = 0.0,
        mode: SearchMode = "hybrid",
        weights: Weights = Weights(),  # noqa: B008 - frozen, so a shared default is safe
        param: str = "vector_store_ids",
    ) -> list[SearchResult]:
        """The best ``limit`` chunks for ``queries`` in all the stores, best first."""
        if not queries:
            raise InvalidRequestError("A search needs at least one query.", param="query")
        states = [
            await self._searchable(store_id, param, mode)
            for store_id in dict.fromkeys(vector_store_ids)
        ]
        vectors = None if mode == "keyword" else await self._embed_queries(queries)
        search = Search(queries, vectors, limit, filters, score_threshold, mode, weights)
        results = await self._search.run(states, search)
        for state in states:
            await self._touch(state.store)
        return results

    # --- ingestion and hooks -----------------------------------------------------------------

    async def warm(self) -> None:
        """Load the indexes of the most recently used stores, so that their first search
        after a (re)start does not wait for the load. Stops when the cache is full."""
        try:
            stores = await self._stores.recently_active(
                now=time.time(), limit=self.settings.warm_stores
            )
            for store in stores:
                if self.cache.chunks >= self.settings.cache_chunks:
                    return
                with acting_for(store.project_id):
                    state = await self._chunks.index_state(store.id)
                if state is not None and state.max_seq > 0:
                    await self.cache.index(state)
        except DATABASE_FAULTS:
            log.warning("could not load vector store indexes at start", exc_info=True)
        finally:
            self.warmed.set()

    async def prepare_embedder(self) -> None:
        """Make the embedder ready before the first file needs it (the default one converts
        its model once, then every process just loads it). A failure is said once; the
        first ingestion then meets it again and fails its file with the reason."""
        try:
            await self._embedder.prepare()
        except (OSError, ValueError) as exc:
            log.warning("could not prepare the embedding model ahead of use: %s", exc)

    async def forget_file(self, file_id: str) -> None:
        """Remove a file being deleted from the Files API from every store, chunks included."""
        await self._chunks.remove_file_everywhere(file_id)

    # --- helpers -----------------------------------------------------------------------------

    async def _embed_queries(self, queries: Sequence[str]) -> NDArray[np.float32]:
        """The queries' vectors, within ``query_timeout`` (retries of the embeddings backend
        included): a search answers in seconds or fails, it does not wait out a backoff."""
        timeout = self.settings.query_timeout
        with anyio.move_on_after(timeout) as scope:
            return await self._embedder.embed(list(queries))
        assert scope.cancelled_caught
        raise UpstreamTimeoutError(
            f"The embeddings backend did not embed the query within {timeout:g} s.",
            status=504,
        )

    async def _state(self, store_id: str) -> StoreState:
        state = await self._stores.get(store_id)
        if state is None:
            raise store_not_found(store_id)
        return state

    async def _searchable(self, store_id: str, param: str, mode: SearchMode) -> IndexState:
        state = await self._chunks.index_state(store_id)
        if state is None:
            raise NotFoundError(f"No vector store found with id '{store_id}'.", param=param)
        await self._check(state.store, param, embeds=mode != "keyword")
        return state

    async def _usable(self, store_id: str) -> None:
        """Raises unless files can be added to the store; marks it active."""
        state = await self._chunks.index_state(store_id)
        if state is None:
            raise store_not_found(store_id)
        await self._check(state.store, "vector_store_id", embeds=True)
        await self._touch(state.store)

    async def _embedding_space(self) -> tuple[str, int]:
        """The embedder's name and dimensions (an embedder that learns its dimensions from its
        first answer is asked once)."""
        if self._space is None:
            try:
                dimensions = self._embedder.dimensions
            except InternalError:
                dimensions = int((await self._embedder.embed(["dimensions"])).shape[1])
            self._space = (self._embedder.name, dimensions)
        return self._space

    async def _check(self, store: StoreRow, param: str, *, embeds: bool) -> None:
        if expired(store, time.time()):
            raise InvalidRequestError(
                f"Vector store '{store.id}' has expired.", param=param, code="vector_store_expired"
            )
        if not embeds:
            return
        mine = await self._embedding_space()
        if (store.embedder, store.dimensions) != mine:
            raise ConflictError(
                f"Vector store '{store.id}' was embedded with '{store.embedder}' "
                f"({store.dimensions} dimensions) but this server embeds with "
                f"'{mine[0]}' ({mine[1]} dimensions); its vectors would not compare. Use "
                "search_mode 'keyword', or a store created with the current embedder.",
                param=param,
                code="embedding_model_mismatch",
            )

    async def _touch(self, store: StoreRow) -> None:
        now = time.time()
        if now - store.last_active_at >= ACTIVE_EVERY:
            await self._stores.touch(store.id, now=now, expires_at=expiry(policy_of(store), now))


def _weights(ranking: RankingOptions) -> Weights:
    hybrid = ranking.hybrid_search
    if hybrid is None:
        return Weights()
    try:
        return Weights(embedding=hybrid.embedding_weight, text=hybrid.text_weight)
    except ValueError as exc:
        raise InvalidRequestError(
            f"Invalid 'ranking_options.hybrid_search': {exc}.",
            param="ranking_options.hybrid_search",
            code="invalid_value",
        ) from None


def _item(result: SearchResult) -> SearchResultItem:
    return SearchResultItem(
        file_id=result.file_id,
        filename=result.filename,
        score=result.score,
        attributes=result.attributes,
        content=[SearchContent(text=result.text)],
    )
