"""An embedder for any OpenAI-compatible ``POST /embeddings`` endpoint (OpenAI, vLLM, Ollama,
llama.cpp, text-embeddings-inference ...).

Texts go in batches of ``batch_size``, up to ``max_concurrency`` requests at once (the rows come
back in input order; one batch failing cancels the others); the answer may carry floats or
base64 (little-endian float32). A transient failure (429, 5xx, timeout, lost connection) is
retried with backoff (:mod:`.retries`). Every failure leaves as an :mod:`agentloom.errors`
upstream error, never an HTTP type.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Final, TypeVar

import anyio
import httpx2
import numpy as np
from anyio.abc import TaskGroup
from numpy.typing import NDArray

from agentloom.config import ConfigError, EmbeddingSettings
from agentloom.errors import (
    InternalError,
    UpstreamError,
    UpstreamTimeoutError,
)
from agentloom.redact import redact_url
from agentloom.retrieval.retries import RetryPolicy, Sleep, with_retries
from agentloom.tls import client_context
from agentloom.upstream import Failure, upstream_error

__all__ = ["OpenAICompatibleEmbedder"]

_CONNECT_TIMEOUT: Final = 10.0

F32 = NDArray[np.float32]
Inputs = Sequence[str] | Sequence[list[int]]  # texts, or token arrays
T = TypeVar("T")
R = TypeVar("R")


class OpenAICompatibleEmbedder:
    """Embeds with ``settings.model`` at ``settings.base_url``; rows are L2-normalised.

    The dimensions are ``settings.dimensions`` (sent upstream, for models that can shorten
    their vectors) or, when not configured, learned from the first answer.
    """

    def __init__(self, settings: EmbeddingSettings, *, sleep: Sleep = anyio.sleep) -> None:
        if not settings.base_url or not settings.model:
            raise ConfigError("an openai_compatible embedder needs base_url and model")
        self._model = settings.model
        self._batch_size = settings.batch_size
        self._concurrency = settings.max_concurrency
        self._retries = RetryPolicy(
            max_retries=settings.max_retries,
            base_delay=settings.retry_base_delay,
            max_delay=settings.retry_max_delay,
            sleep=sleep,
        )
        self._requested = settings.dimensions
        self._dimensions = settings.dimensions
        base_url = settings.base_url.rstrip("/")
        self._where = redact_url(base_url)  # shown in errors
        key = settings.resolved_api_key()
        self._client = httpx2.AsyncClient(
            verify=client_context(),
            base_url=base_url + "/",
            headers={"authorization": f"Bearer {key}"} if key else {},
            timeout=httpx2.Timeout(
                settings.timeout, connect=min(settings.timeout, _CONNECT_TIMEOUT)
            ),
            follow_redirects=True,
        )

    @property
    def name(self) -> str:
        suffix = f"@{self._requested}" if self._requested is not None else ""
        return f"openai:{self._model}{suffix}"

    @property
    def dimensions(self) -> int:
        if self._dimensions is None:
            raise InternalError(
                f"the dimensions of embedding model {self._model} are not known before its first "
                "answer; set embeddings.dimensions in the configuration"
            )
        return self._dimensions

    @property
    def model(self) -> str:
        """The upstream model name."""
        return self._model

    async def embed(self, texts: Sequence[str]) -> F32:
        batches = _split(texts, self._batch_size)
        if not batches:
            return np.zeros((0, self._dimensions or 0), dtype=np.float32)
        rows = await self._gather(batches, self._batch)
        return rows[0] if len(rows) == 1 else np.concatenate(rows)

    async def create(
        self, inputs: Inputs, *, dimensions: int | None = None, user: str | None = None
    ) -> tuple[F32, int | None]:
        """Embed ``inputs`` (texts, or token arrays the backend reads) as a client asked:
        ``dimensions`` and ``user`` go upstream as given. The vectors come back as the backend
        sent them (not re-normalised), in batches as :meth:`embed`; with them the prompt tokens
        the backend reported, or None when an answer did not say."""
        options: dict[str, object] = {"dimensions": dimensions, "user": user}
        wanted = {name: value for name, value in options.items() if value is not None}
        body = {"model": self._model, "encoding_format": "float", **wanted}

        async def one(batch: Sequence[str | list[int]]) -> tuple[F32, int | None]:
            answer = await self._post({**body, "input": list(batch)})
            return _finite(_vectors(answer, len(batch))), _prompt_tokens(answer)

        items: Sequence[str | list[int]] = inputs
        answers = await self._gather(_split(items, self._batch_size), one)
        if len({vectors.shape[1] for vectors, _ in answers}) > 1:
            raise _invalid("batches of embeddings of different lengths")
        tokens = [count for _, count in answers]
        total = None if None in tokens else sum(count or 0 for count in tokens)
        return np.concatenate([vectors for vectors, _ in answers]), total

    async def prepare(self) -> None:
        """Nothing to make ready: the backend embeds."""

    async def aclose(self) -> None:
        await self._client.aclose()

    async def _gather(
        self, batches: Sequence[Sequence[T]], one: Callable[[Sequence[T]], Awaitable[R]]
    ) -> list[R]:
        """``one`` of every batch, in order; at most ``max_concurrency`` requests at once. The
        first failure cancels the other batches and is raised as it is."""
        if len(batches) == 1:
            return [await one(batches[0])]
        results: list[R | None] = [None] * len(batches)
        failures: list[UpstreamError] = []
        limiter = anyio.Semaphore(self._concurrency)

        async def run(at: int, tasks: TaskGroup) -> None:
            async with limiter:
                try:
                    results[at] = await one(batches[at])
                except UpstreamError as exc:
                    failures.append(exc)
                    tasks.cancel_scope.cancel()

        async with anyio.create_task_group() as tasks:
            for at in range(len(batches)):
                tasks.start_soon(run, at, tasks)
        if failures:
            raise failures[0]
        return [result for result in results if result is not None]

    async def _batch(self, texts: Sequence[str]) -> F32:
        body: dict[str, object] = {
            "model": self._model,
            # OpenAI refuses empty strings; a blank text has no meaning to embed anyway
            "input": [text if text.strip() else " " for text in texts],
            "encoding_format": "float",
        }
        if self._requested is not None:
            body["dimensions"] = self._requested
        answer = await self._post(body)
        vectors = _vectors(answer, len(texts))
        self._check_dimensions(vectors.shape[1])
        return _normalised(vectors)

    async def _post(self, body: Mapping[str, object]) -> object:
        what = f"an embeddings request to {self._where}"
        content = await with_retries(lambda: self._send(body), self._retries, what)
        try:
            return json.loads(content)
        except ValueError as exc:
            raise UpstreamError("the embeddings backend sent an answer that is not JSON") from exc

    async def _send(self, body: Mapping[str, object]) -> bytes:
        """One request; the body of a successful answer."""
        try:
            response = await self._client.post("embeddings", json=body)
        except httpx2.TimeoutException as exc:
            raise UpstreamTimeoutError(
                f"the embeddings backend at {self._where} did not answer in time"
            ) from exc
        except httpx2.HTTPError as exc:
            raise UpstreamError(
                f"could not reach the embeddings backend at {self._where}: {exc}"
            ) from exc
        if response.status_code >= 400:
            raise _status_error(response.status_code, response.headers, response.content)
        return response.content

    def _check_dimensions(self, found: int) -> None:
        if self._dimensions is None:
            self._dimensions = found
        elif found != self._dimensions:
            raise UpstreamError(
                f"the embeddings backend sent vectors of {found} dimensions, "
                f"expected {self._dimensions}"
            )


# --- answers ---------------------------------------------------------------------------------


def _vectors(answer: object, count: int) -> F32:
    """The ``data[].embedding`` rows of an answer, in ``index`` order."""
    data = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(data, list) or len(data) != count:
        raise _invalid(f"expected {count} embeddings in `data`")
    rows: list[F32 | None] = [None] * count
    for position, entry in enumerate(data):
        index = entry.get("index", position) if isinstance(entry, dict) else None
        if not isinstance(index, int) or not 0 <= index < count or rows[index] is not None:
            raise _invalid("an embedding with a missing, repeated or out-of-range `index`")
        rows[index] = _row(entry.get("embedding"))
    found = [row for row in rows if row is not None]
    if len({len(row) for row in found}) != 1:
        raise _invalid("embeddings of different lengths")
    return np.stack(found)


def _row(value: object) -> F32:
    row = _decoded_row(value)
    if not np.isfinite(row).all():
        raise _invalid("an embedding holding NaN, Infinity or a number beyond float32's range")
    return row


def _decoded_row(value: object) -> F32:
    if isinstance(value, str):
        try:
            raw = base64.b64decode(value, validate=True)
        except binascii.Error as exc:
            raise _invalid("an embedding that is not valid base64") from exc
        if not raw or len(raw) % 4:
            raise _invalid("a base64 embedding that is not a float32 array")
        return np.frombuffer(raw, dtype="<f4").astype(np.float32)
    if isinstance(value, list) and value and all(_is_number(v) for v in value):
        try:
            with np.errstate(over="ignore"):  # beyond float32: infinite, refused above
                return np.asarray(value, dtype=np.float32)
        except OverflowError as exc:  # an integer beyond any float
            raise _invalid("an embedding holding a number beyond float32's range") from exc
    raise _invalid("an embedding that is neither a list of numbers nor base64")


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _split(inputs: Sequence[T], size: int) -> list[Sequence[T]]:
    return [inputs[i : i + size] for i in range(0, len(inputs), size)]


def _prompt_tokens(answer: object) -> int | None:
    """``usage.prompt_tokens`` of an answer, if it has a count there."""
    usage = answer.get("usage") if isinstance(answer, dict) else None
    tokens = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    return tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None


def _finite(vectors: F32) -> F32:
    if not np.isfinite(vectors).all():
        raise _invalid("an embedding with a value that is not a finite number")
    return vectors


def _normalised(vectors: F32) -> F32:
    _finite(vectors)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    if (norms == 0).any():
        raise _invalid("an embedding of all zeros")
    vectors /= norms
    return vectors


def _invalid(problem: str) -> UpstreamError:
    return UpstreamError(f"the embeddings backend sent an invalid answer: {problem}")


# --- errors ----------------------------------------------------------------------------------


def _status_error(status: int, headers: Mapping[str, str], raw: bytes) -> UpstreamError:
    return upstream_error("the embeddings backend", Failure.of_http(status, headers, raw))
