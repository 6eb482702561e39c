"""``python -m bench.ingestion``: ingestion through the server, end to end, and its memory.

A corpus of real English sentences (standard library docstrings, shuffled into paragraphs) is
cut into ``--files`` files of about ``--chunks / --files`` static chunks each (100 tokens,
overlap 25: the retrieval bench's chunking). A fresh ``agentloom serve`` (its own process,
SQLite in a temporary directory, default settings: the embedded MiniLM) gets the files, and
the time is taken from the file batch's creation to its completion (the SDK's polling at the
server's hint). Reported: chunks/s and the server process's peak RSS (``VmHWM``), with its RSS
once the files are uploaded (before ingestion) beside it. ``--runtime numpy`` runs MiniLM on
its numpy fallback instead of onnxruntime.

``make bench`` adds the 5,000-chunk row; ``python -m bench.ingestion --chunks 50000`` is the
one-off large corpus (``--files 1``: one file of every chunk).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import os
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import openai

from agentloom.config import EmbeddingSettings
from agentloom.retrieval.chunking import chunk_spans, count_tokens
from agentloom.retrieval.embeddings import MiniLMEmbedder, build_embedder
from bench.processes import HOST, cpu_seconds, free_port, process
from bench.retrieval import sentence_pool

MAX_TOKENS, OVERLAP = 100, 25
PARAGRAPH = 6  # sentences per paragraph


@dataclass(frozen=True, slots=True)
class Result:
    files: int
    chunks: int
    seconds: float  # from the batch's creation until every file is completed
    rss_before: int  # bytes: the server's resident set once the files are uploaded
    peak_rss: int  # bytes: the server's peak resident set (VmHWM), ingestion included
    cpu_seconds: float  # the server process's CPU time (user + system) during ingestion
    runtime: str  # MiniLM's runtime in the server

    @property
    def rate(self) -> float:
        return self.chunks / self.seconds

    @property
    def cpu_rate(self) -> float:
        """Chunks per CPU second of the server: steadier than the rate on a shared machine."""
        return self.chunks / self.cpu_seconds


# --- corpus ----------------------------------------------------------------------------------


def corpus(chunks: int, files: int, *, seed: int = 0) -> list[str]:
    """``files`` documents of ``chunks / files`` chunks each (rounded)."""
    pool = sentence_pool(100_000)
    rng = np.random.default_rng(seed)
    per_file = max(1, round(chunks / files))
    return [_document(pool, rng, per_file) for _ in range(files)]


def _document(pool: Sequence[str], rng: np.random.Generator, chunks: int) -> str:
    """Paragraphs of random pool sentences, cut where the ``chunks``-th chunk ends."""
    paragraphs: list[str] = []
    tokens, wanted = 0, chunks * (MAX_TOKENS - OVERLAP) * 1.3 + MAX_TOKENS
    while tokens < wanted:
        paragraph = " ".join(pool[i] for i in rng.integers(len(pool), size=PARAGRAPH))
        paragraphs.append(paragraph)
        tokens += count_tokens(paragraph)
    text = "\n\n".join(paragraphs)
    return text[: chunk_spans(text, max_tokens=MAX_TOKENS, overlap=OVERLAP)[chunks - 1].end]


def count_chunks(documents: Sequence[str]) -> int:
    return sum(len(chunk_spans(d, max_tokens=MAX_TOKENS, overlap=OVERLAP)) for d in documents)


# --- the server ------------------------------------------------------------------------------


def _rss(pid: int, field: str) -> int:
    """A ``/proc/<pid>/status`` memory field (``VmRSS``, ``VmHWM``) in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} for process {pid}")


@contextlib.contextmanager
def server(folder: Path, runtime: str) -> Iterator[tuple[int, int]]:
    """A fresh server on SQLite in ``folder``, MiniLM on ``runtime``: its port and process id."""
    port = free_port()
    (folder / "files").mkdir()
    env = {
        "AGENTLOOM_DATABASE_URL": f"sqlite:///{folder / 'agentloom.db'}",
        "AGENTLOOM_FILES_DIRECTORY": str(folder / "files"),
        "AGENTLOOM_EMBEDDINGS_RUNTIME": runtime,
    }
    args = [sys.executable, "-m", "agentloom.cli.main", "serve", "--port", str(port)]
    with process([*args, "--log-level", "warning"], port, "/v1/health", env) as proc:
        yield port, proc.pid


# --- measuring -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Run:
    seconds: float
    cpu_seconds: float
    rss_before: int
    peak_rss: int


async def ingest(port: int, pid: int, documents: Sequence[str]) -> _Run:
    """Upload ``documents`` and ingest them as one file batch."""
    client = openai.AsyncOpenAI(base_url=f"http://{HOST}:{port}/v1", api_key="bench")
    async with client:
        ids = [
            (await client.files.create(file=(f"doc{n}.md", body.encode()), purpose="assistants")).id
            for n, body in enumerate(documents)
        ]
        store = await client.vector_stores.create(name="ingestion")
        strategy: Any = {
            "type": "static",
            "static": {"max_chunk_size_tokens": MAX_TOKENS, "chunk_overlap_tokens": OVERLAP},
        }
        before, cpu = _rss(pid, "VmRSS"), cpu_seconds(pid)
        start = time.perf_counter()
        batch = await client.vector_stores.file_batches.create_and_poll(
            vector_store_id=store.id, file_ids=ids, chunking_strategy=strategy
        )
        seconds = time.perf_counter() - start
    if batch.file_counts.completed != len(ids):
        raise RuntimeError(f"ingestion did not complete: {batch.file_counts!r}")
    return _Run(seconds, cpu_seconds(pid) - cpu, before, _rss(pid, "VmHWM"))


def measure(chunks: int, files: int, runtime: str = "auto") -> Result:
    documents = corpus(chunks, files)
    total = count_chunks(documents)
    with contextlib.ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="agentloom-")))
        port, pid = stack.enter_context(server(folder, runtime))
        run = asyncio.run(ingest(port, pid, documents))
    return Result(
        len(documents),
        total,
        run.seconds,
        run.rss_before,
        run.peak_rss,
        run.cpu_seconds,
        _runtime(runtime),
    )


def _runtime(runtime: str) -> str:
    """The runtime ``runtime`` resolves to in the server (which runs this Python), and the
    precision of its vector stores' embedder (``AGENTLOOM_EMBEDDINGS_PRECISION``, or what
    ``auto`` means there)."""
    if runtime == "auto":
        runtime = "onnx" if importlib.util.find_spec("onnxruntime") else "numpy"
    precision = os.environ.get("AGENTLOOM_EMBEDDINGS_PRECISION", "auto")
    settings = EmbeddingSettings.model_validate({"runtime": runtime, "precision": precision})
    embedder = build_embedder(settings)
    assert isinstance(embedder, MiniLMEmbedder), "the server's default embedder is MiniLM"
    return f"{'onnxruntime' if runtime == 'onnx' else runtime} {embedder.precision}"


def describe(result: Result) -> str:
    return (
        f"{result.files} files, {result.chunks} chunks (MiniLM on {result.runtime}):"
        f" {result.seconds:.1f} s, {result.rate:.1f} chunks/s ({result.cpu_rate:.1f} per CPU"
        f" second), peak RSS {mib(result.peak_rss)}"
        f" ({mib(result.rss_before)} before ingestion)"
    )


def mib(size: int) -> str:
    return f"{size / (1024 * 1024):.0f} MiB"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=5000, help="chunks in the corpus")
    parser.add_argument("--files", type=int, default=50, help="files the chunks are spread over")
    parser.add_argument("--runtime", choices=["auto", "onnx", "numpy"], default="auto")
    args = parser.parse_args(argv)
    print(describe(measure(args.chunks, args.files, args.runtime)), flush=True)


if __name__ == "__main__":
    main()
