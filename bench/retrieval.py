"""``python -m bench.retrieval``: retrieval quality and ``ChunkIndex`` speed.

Quality: the labelled corpus of ``bench/corpus/retrieval.py`` (40 documents, 64 questions) is
chunked (static, 100 tokens, overlap 25), embedded with the embedded all-MiniLM-L6-v2, and every
question is searched in each mode; a question is answered at the rank of the first chunk of its
document. Reported: recall@5 and MRR@10, overall and per kind of question.

Scale: embedding 100k chunks with MiniLM on a small machine takes far too long, so the chunks are
synthetic: a pool of real English sentences (docstrings of Python's standard library) is embedded
with MiniLM once, and each chunk joins 3-5 random pool sentences, its vector the normalised mean
of theirs. Queries are other pool sentences with their own vectors. Reported: search latency
(median / p95 over the queries, ``limit=10``) per mode at 10k and 100k chunks, ``add()``
throughput (index only, vectors given, batches of 1000 chunks) and the index's memory.

ANN: the same synthetic chunks, 50,000 and 1,000,000 of them, in the default index
(``ApproximateIndex``: an HNSW graph past ``ann_threshold`` chunks), added in batches of 4096
like the index cache does. Reported: how long ``add`` of every chunk takes (from then on exact
search serves them all), how long until the graph, built in the background, serves (``add``
included), search latency (p50 / p99) per mode once it serves, recall@10 of vector search
against exact search over the same chunks, how far hybrid's top 10 agrees with exact hybrid's,
exact vector search's latency for comparison, and memory (exact index, graph). ``--ann-sizes``
takes other sizes (the 1,000,000-chunk build takes minutes).

``make bench`` appends the tables to ``bench/RESULTS.md``; alone, ``--write`` replaces the
retrieval section there.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import inspect
import re
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from agentloom.config import EmbeddingSettings
from agentloom.retrieval.ann import ANN_THRESHOLD, ApproximateIndex
from agentloom.retrieval.chunking import chunk_text
from agentloom.retrieval.embeddings import Embedder, build_embedder
from agentloom.retrieval.index import ChunkIndex, Hit, IndexedChunk, SearchMode
from bench.corpus.retrieval import DOCUMENTS, QUESTIONS, Question

RESULTS = Path(__file__).with_name("RESULTS.md")
HEADING = "## Retrieval"
MODES: tuple[SearchMode, ...] = ("vector", "keyword", "hybrid")
CHUNK_TOKENS, CHUNK_OVERLAP = 100, 25
RECALL_AT, MRR_AT = 5, 10

F32 = NDArray[np.float32]


def embed(embedder: Embedder, texts: Sequence[str]) -> F32:
    return asyncio.run(embedder.embed(texts))


# --- quality ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Quality:
    label: str
    recall: float  # recall@5
    mrr: float  # MRR@10
    recall_by_kind: dict[str, float]


def corpus_index(embedder: Embedder) -> ChunkIndex:
    pieces = [
        (doc_id, chunk.text)
        for doc_id, text in DOCUMENTS.items()
        for chunk in chunk_text(text, max_tokens=CHUNK_TOKENS, overlap=CHUNK_OVERLAP)
    ]
    vectors = embed(embedder, [text for _, text in pieces])
    index = ChunkIndex(embedder.dimensions)
    index.add(
        [IndexedChunk(i, doc_id, text, vectors[i]) for i, (doc_id, text) in enumerate(pieces)]
    )
    return index


@dataclass(frozen=True, slots=True)
class Setting:
    label: str
    mode: SearchMode
    candidates: int | None = None


SETTINGS = [
    Setting("vector", "vector"),
    Setting("keyword", "keyword"),
    Setting("hybrid", "hybrid"),
    Setting("hybrid, fusing each side's top 50 (not the default)", "hybrid", 50),
]


def answer_rank(index: ChunkIndex, question: Question, vector: F32, setting: Setting) -> int | None:
    """The 1-based rank of the first chunk of the answering document, if within MRR_AT."""
    hits = index.search(
        vector, question.text, limit=MRR_AT, mode=setting.mode, candidates=setting.candidates
    )
    files = [h.file_id for h in hits]
    return files.index(question.answer) + 1 if question.answer in files else None


def evaluate(embedder: Embedder) -> list[Quality]:
    index = corpus_index(embedder)
    vectors = embed(embedder, [q.text for q in QUESTIONS])
    results = []
    for setting in SETTINGS:
        ranks = [answer_rank(index, q, vectors[i], setting) for i, q in enumerate(QUESTIONS)]
        results.append(_quality(setting.label, ranks))
    return results


def _quality(label: str, ranks: list[int | None]) -> Quality:
    found = [r is not None and r <= RECALL_AT for r in ranks]
    kinds = sorted({q.kind for q in QUESTIONS})
    by_kind = {
        kind: statistics.mean(f for f, q in zip(found, QUESTIONS, strict=True) if q.kind == kind)
        for kind in kinds
    }
    mrr = statistics.mean(1 / r if r is not None else 0.0 for r in ranks)
    return Quality(label, statistics.mean(found), mrr, by_kind)


# --- scale -----------------------------------------------------------------------------------

POOL_MODULES = [
    "argparse",
    "asyncio",
    "collections",
    "csv",
    "datetime",
    "decimal",
    "difflib",
    "email.message",
    "fractions",
    "functools",
    "http.client",
    "http.server",
    "imaplib",
    "inspect",
    "ipaddress",
    "json",
    "logging",
    "mailbox",
    "os",
    "pathlib",
    "pickle",
    "poplib",
    "pprint",
    "queue",
    "random",
    "re",
    "shutil",
    "smtplib",
    "socket",
    "sqlite3",
    "statistics",
    "string",
    "subprocess",
    "tarfile",
    "tempfile",
    "textwrap",
    "threading",
    "timeit",
    "typing",
    "unittest",
    "urllib.request",
    "uuid",
    "zipfile",
    "configparser",
    "calendar",
    "contextlib",
    "dataclasses",
    "enum",
    "heapq",
    "hashlib",
    "locale",
    "platform",
    "tokenize",
]
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def sentence_pool(count: int) -> list[str]:
    """Up to ``count`` distinct English sentences from standard library docstrings."""
    found: set[str] = set()
    for name in POOL_MODULES:
        module = importlib.import_module(name)
        for _, member in inspect.getmembers(module):
            doc = inspect.getdoc(member) if callable(member) else None
            if doc:
                found.update(_sentences(doc))
    rng = np.random.default_rng(0)
    pool = sorted(found)
    return [pool[i] for i in rng.permutation(len(pool))[:count]]


def _sentences(doc: str) -> list[str]:
    text = " ".join(doc.split())
    return [
        s
        for s in _SENTENCE_END.split(text)
        if 40 <= len(s) <= 200 and s[0].isupper() and sum(c.isalpha() for c in s) > 0.7 * len(s)
    ]


@dataclass(frozen=True, slots=True)
class Synthetic:
    chunks: list[IndexedChunk]
    queries: list[tuple[str, F32]]


def synthesise(pool: list[str], vectors: F32, count: int, queries: int, seed: int) -> Synthetic:
    rng = np.random.default_rng(seed)
    held_out = len(pool) // 10  # query sentences are not part of any chunk
    sizes = rng.integers(3, 6, size=count)
    picked = rng.integers(held_out, len(pool), size=(count, 5))
    used = np.arange(5) < sizes[:, None]
    means = np.zeros((count, vectors.shape[1]), dtype=np.float32)
    for j in range(5):
        means += vectors[picked[:, j]] * used[:, j : j + 1]
    means /= np.linalg.norm(means, axis=1, keepdims=True)
    chunks = [
        IndexedChunk(i, f"file-{i // 20}", " ".join(pool[j] for j in row[:size]), means[i])
        for i, (row, size) in enumerate(zip(picked.tolist(), sizes.tolist(), strict=True))
    ]
    asked = rng.choice(held_out, size=queries)
    return Synthetic(chunks, [(pool[j], vectors[j]) for j in asked])


@dataclass(frozen=True, slots=True)
class Latency:
    label: str
    median_ms: float
    p95_ms: float


@dataclass(frozen=True, slots=True)
class Scale:
    chunks: int
    add_per_second: float
    megabytes: float
    latencies: list[Latency]


def measure_scale(data: Synthetic, dimensions: int) -> Scale:
    index = ChunkIndex(dimensions)
    start = time.perf_counter()
    for at in range(0, len(data.chunks), 1000):
        index.add(data.chunks[at : at + 1000])
    rate = len(data.chunks) / (time.perf_counter() - start)
    latencies = [_latency(index, data, mode, mode) for mode in MODES]
    files = [f"file-{i}" for i in range(0, len(data.chunks) // 20, 10)]
    latencies.append(_latency(index, data, "hybrid", "hybrid, 10% of the files", files))
    return Scale(len(data.chunks), rate, index.nbytes / 1e6, latencies)


def _latency(
    index: ChunkIndex,
    data: Synthetic,
    mode: SearchMode,
    label: str,
    files: list[str] | None = None,
) -> Latency:
    for text, vector in data.queries[:10]:  # warm up
        index.search(vector, text, limit=10, mode=mode, files=files)
    seconds = []
    for text, vector in data.queries:
        start = time.perf_counter()
        index.search(vector, text, limit=10, mode=mode, files=files)
        seconds.append(time.perf_counter() - start)
    p95 = float(np.percentile(seconds, 95))
    return Latency(label, statistics.median(seconds) * 1000, p95 * 1000)


# --- ANN -------------------------------------------------------------------------------------

ANN_BATCH = 4096  # chunks per add(), as the index cache loads them
RECALL_K = 10


@dataclass(frozen=True, slots=True)
class Timed:
    label: str
    p50_ms: float
    p99_ms: float


@dataclass(frozen=True, slots=True)
class AnnScale:
    chunks: int
    add_seconds: float  # add() of every chunk: exact search serves them from then on
    serving_seconds: float  # from the first add() until the graph serves every chunk
    latencies: list[Timed]
    recall: float  # vector search's top 10 against exact search's
    hybrid_agreement: float  # hybrid's top 10 against exact hybrid's
    exact_index_mb: float
    graph_mb: float


def measure_ann(data: Synthetic, dimensions: int, threshold: int = ANN_THRESHOLD) -> AnnScale:
    index = ApproximateIndex(dimensions, threshold=threshold)
    start = time.perf_counter()
    for at in range(0, len(data.chunks), ANN_BATCH):
        index.add(data.chunks[at : at + ANN_BATCH])
    added = time.perf_counter() - start
    index.wait_ready()
    serving = time.perf_counter() - start
    files = [f"file-{i}" for i in range(0, len(data.chunks) // 20, 10)]
    few = [f"file-{i}" for i in range(0, len(data.chunks) // 20, 200)]
    exact = index.exact
    timings = [
        _timed(index, data, "vector", "vector"),
        _timed(index, data, "hybrid", "hybrid"),
        _timed(index, data, "hybrid", "hybrid, 10% of the files", files),
        _timed(index, data, "hybrid", "hybrid, 0.5% of the files (exact)", few),
        _timed(exact, data, "vector", "vector, exact (for comparison)"),
    ]
    return AnnScale(
        len(data.chunks),
        added,
        serving,
        timings,
        _agreement(index, exact, data, "vector"),
        _agreement(index, exact, data, "hybrid"),
        exact.nbytes / 1e6,
        (index.nbytes - exact.nbytes) / 1e6,
    )


def _timed(
    index: ApproximateIndex | ChunkIndex,
    data: Synthetic,
    mode: SearchMode,
    label: str,
    files: list[str] | None = None,
) -> Timed:
    for text, vector in data.queries[:10]:  # warm up
        index.search(vector, text, limit=RECALL_K, mode=mode, files=files)
    seconds = []
    for text, vector in data.queries:
        start = time.perf_counter()
        index.search(vector, text, limit=RECALL_K, mode=mode, files=files)
        seconds.append(time.perf_counter() - start)
    p50, p99 = np.percentile(seconds, [50, 99])
    return Timed(label, float(p50) * 1000, float(p99) * 1000)


def _agreement(
    index: ApproximateIndex, exact: ChunkIndex, data: Synthetic, mode: SearchMode
) -> float:
    """The share of exact search's top 10 that the index's top 10 holds, over the queries."""
    shares = []
    for text, vector in data.queries:
        found = index.search(vector, text, limit=RECALL_K, mode=mode)
        expected = exact.search(vector, text, limit=RECALL_K, mode=mode)
        shares.append(len(_ids(found) & _ids(expected)) / max(len(expected), 1))
    return statistics.mean(shares)


def _ids(hits: list[Hit]) -> set[int]:
    return {h.chunk_id for h in hits}


# --- report ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Report:
    quality: list[Quality]
    pool: int
    queries: int
    scales: list[Scale]
    anns: list[AnnScale]


def measure(
    pool_size: int = 2000,
    sizes: Sequence[int] = (10_000, 100_000),
    queries: int = 200,
    ann_sizes: Sequence[int] = (50_000, 1_000_000),
    quality: bool = True,
) -> Report:
    embedder = build_embedder(EmbeddingSettings())
    qualities = evaluate(embedder) if quality else []
    pool = sentence_pool(pool_size)
    vectors = embed(embedder, pool)
    scales = []
    for size in sizes:
        scale = measure_scale(
            synthesise(pool, vectors, size, queries, seed=size), embedder.dimensions
        )
        _progress(f"{size:,} chunks measured")
        scales.append(scale)
    anns = []
    for size in ann_sizes:
        data = synthesise(pool, vectors, size, queries, seed=size)
        _progress(f"{size:,} chunks made for ANN")
        anns.append(measure_ann(data, embedder.dimensions))
        del data
        _progress(f"ANN at {size:,} chunks measured")
    return Report(qualities, len(pool), queries, scales, anns)


def _progress(message: str) -> None:
    print(f"bench.retrieval: {message}", file=sys.stderr, flush=True)


def quality_table(results: list[Quality]) -> str:
    kinds = list(results[0].recall_by_kind)
    counts = {k: sum(q.kind == k for q in QUESTIONS) for k in kinds}
    head = ["search", f"recall@{RECALL_AT}", f"MRR@{MRR_AT}"]
    head += [f"recall@{RECALL_AT}, {k} ({counts[k]})" for k in kinds]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        cells = [r.label, f"{r.recall:.3f}", f"{r.mrr:.3f}"]
        cells += [f"{r.recall_by_kind[k]:.3f}" for k in kinds]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def scale_table(scales: list[Scale]) -> str:
    head = ["search (limit 10)"] + [f"{s.chunks:,} chunks: median / p95 ms" for s in scales]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for i, latency in enumerate(scales[0].latencies):
        cells = [latency.label]
        cells += [f"{s.latencies[i].median_ms:.2f} / {s.latencies[i].p95_ms:.2f}" for s in scales]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append(
        "| add(), chunks/s | " + " | ".join(f"{s.add_per_second:,.0f}" for s in scales) + " |"
    )
    lines.append("| index memory, MB | " + " | ".join(f"{s.megabytes:.0f}" for s in scales) + " |")
    return "\n".join(lines)


def ann_table(anns: list[AnnScale]) -> str:
    head = ["ANN index (limit 10)"] + [f"{a.chunks:,} chunks" for a in anns]
    rows = [head, ["add of every chunk (exact search serves them), s"]]
    rows[-1] += [f"{a.add_seconds:.0f}" for a in anns]
    rows.append(["until the graph serves (built in the background, add included), s"])
    rows[-1] += [f"{a.serving_seconds:.0f}" for a in anns]
    for i, timed in enumerate(anns[0].latencies):
        rows.append([f"{timed.label}: p50 / p99 ms"])
        rows[-1] += [f"{a.latencies[i].p50_ms:.2f} / {a.latencies[i].p99_ms:.2f}" for a in anns]
    rows.append([f"recall@{RECALL_K}, vector, against exact"] + [f"{a.recall:.3f}" for a in anns])
    rows.append([f"hybrid's top {RECALL_K} shared with exact hybrid's"])
    rows[-1] += [f"{a.hybrid_agreement:.3f}" for a in anns]
    rows.append(["memory: exact index / graph, MB"])
    rows[-1] += [f"{a.exact_index_mb:.0f} / {a.graph_mb:.0f}" for a in anns]
    lines = ["| " + " | ".join(row) + " |" for row in rows]
    lines.insert(1, "|" + "---|" * len(head))
    return "\n".join(lines)


def markdown(report: Report) -> str:
    parts = [HEADING, ""]
    if report.quality:
        parts += [_quality_intro(), "", quality_table(report.quality), ""]
    if report.scales or report.anns:
        parts += [
            f"Scale, **synthetic chunks**: {report.pool} real sentences (Python standard library"
            " docstrings) embedded with MiniLM once; each chunk joins 3-5 of them and its vector"
            " is the normalised mean of theirs (384 dimensions)."
            f" Queries: {report.queries} held-out sentences, each with its own vector."
            " One process, the index alone (no database, no HTTP).",
            "",
        ]
    if report.scales:
        parts += ["`ChunkIndex` (exact):", "", scale_table(report.scales), ""]
    if report.anns:
        parts += [
            f"The default index (`ApproximateIndex`, HNSW past {ANN_THRESHOLD:,} chunks, usearch"
            " with 8-bit vectors, candidates rescored exactly, the graph built in a background"
            " thread), chunks added 4096 at a time; latencies once the graph serves, recall and"
            " agreement over the same queries:",
            "",
            ann_table(report.anns),
            "",
        ]
    return "\n".join(parts)


def _quality_intro() -> str:
    chunks = sum(
        len(chunk_text(t, max_tokens=CHUNK_TOKENS, overlap=CHUNK_OVERLAP))
        for t in DOCUMENTS.values()
    )
    return (
        f"`python -m bench.retrieval`. Quality: {len(DOCUMENTS)} documents ({chunks} chunks of"
        f" at most {CHUNK_TOKENS} tokens) and {len(QUESTIONS)} labelled questions"
        " (`bench/corpus/retrieval.py`), embedded with the embedded all-MiniLM-L6-v2;"
        " hybrid is weighted reciprocal rank fusion (k = 60, equal weights) of each side's"
        " top 10 (`limit`)."
    )


def current() -> str | None:
    """The retrieval section bench/RESULTS.md holds now (kept by a run that skips it)."""
    text = RESULTS.read_text() if RESULTS.exists() else ""
    _, found, section = text.partition(f"\n{HEADING}\n")
    return f"{HEADING}\n{section}".rstrip("\n") + "\n" if found else None


def write(section: str) -> None:
    """Replace (or add) the retrieval section of bench/RESULTS.md."""
    current = RESULTS.read_text() if RESULTS.exists() else ""
    before = current.split(f"\n{HEADING}\n")[0].rstrip("\n")
    RESULTS.write_text(f"{before}\n\n{section}" if before else section)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pool", type=int, default=2000, help="sentences embedded for scale")
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--ann-sizes", type=int, nargs="*", default=[50_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--no-quality", action="store_true", help="skip the labelled corpus")
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    args = parser.parse_args(argv)
    report = measure(args.pool, args.sizes, args.queries, args.ann_sizes, not args.no_quality)
    section = markdown(report)
    print(section)
    if args.write:
        write(section)
        print(f"written to {RESULTS}", file=sys.stderr)


if __name__ == "__main__":
    main()
