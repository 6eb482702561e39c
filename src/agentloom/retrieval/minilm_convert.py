"""all-MiniLM-L6-v2 converted to ONNX on first use, and cached.

The ONNX model is built from the installed safetensors weights (:mod:`.minilm_graph`), never
downloaded. It is kept in a cache directory (default ``~/.cache/agentloom``, or
``$XDG_CACHE_HOME/agentloom``) under a name keyed by the weights file (path, size, modification
time), the graph's version and the precision, so the next process just loads it (a cache
directory that cannot be written is replaced by a temporary one for the process).

Each model is two files: the graph (``.onnx``, ~70 KB) and its tensors (``.onnx.data``), each
tensor at a 64 KiB-aligned offset. onnxruntime memory-maps such external data instead of
copying it: the 47 MB word-embedding table is shared with the page cache and only the rows in
use become resident (measured: a session costs 48 MB of RSS instead of 122 MB).

``int8`` is the float32 model dynamically quantised by onnxruntime: weights int8 per output
channel with 7-bit range (AVX2's u8 x s8 products cannot saturate), activations quantised per
batch, the embeddings' lookup kept float32.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Final, Literal

from agentloom.retrieval.safetensors import read_safetensors

if TYPE_CHECKING:
    import onnx

__all__ = ["GRAPH_VERSION", "convert_ahead", "default_cache_directory", "model_file", "writable"]

Precision = Literal["fp32", "int8"]

GRAPH_VERSION: Final = 1  # of minilm_graph's graph and this layout: bump to rebuild caches
ALIGNMENT: Final = 65536  # external tensors' offsets: onnxruntime maps aligned ones
_INLINE_BYTES: Final = 4096  # smaller tensors stay in the graph file

log = logging.getLogger(__name__)


def default_cache_directory() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agentloom"


def model_file(weights: Path, precision: Precision, folder: Path) -> Path:
    """The ONNX model of ``weights`` at ``precision`` in ``folder``, made if missing."""
    path = folder / f"all-minilm-l6-v2-{_key(weights)}-{precision}.onnx"
    if path.exists():
        return path
    if precision == "fp32":
        log.info("converting all-MiniLM-L6-v2 to ONNX into %s", path)
        _save(_converted(weights), path)
    else:
        source = model_file(weights, "fp32", folder)
        log.info("quantising all-MiniLM-L6-v2 to int8 into %s", path)
        _save(_quantised(source), path)
    return path


def convert_ahead(weights: Path, precision: Precision, folder: Path) -> None:
    """Make the cached model now if it is missing (a stat when it is there), so that the first
    embedding does not wait for the conversion; nothing where ``folder`` cannot be written (the
    process that loads the model converts into a temporary folder then)."""
    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True)
    if os.access(folder, os.W_OK | os.X_OK):
        model_file(weights, precision, folder)


@contextlib.contextmanager
def writable(folder: Path) -> Iterator[Path]:
    """``folder``, or a temporary directory while the model loads when ``folder`` cannot be
    written (a loaded session keeps its mapping of the deleted files)."""
    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True)
    if os.access(folder, os.W_OK | os.X_OK):
        yield folder
        return
    log.warning("cache directory %s is not writable: converting into a temporary one", folder)
    with tempfile.TemporaryDirectory(prefix="agentloom-onnx-") as tmp:
        yield Path(tmp)


def _key(weights: Path) -> str:
    resolved = weights.resolve()
    stat = resolved.stat()
    identity = f"{GRAPH_VERSION}:{resolved}:{stat.st_size}:{stat.st_mtime_ns}"
    return hashlib.sha256(identity.encode()).hexdigest()[:16]


def _converted(weights: Path) -> onnx.ModelProto:
    from agentloom.retrieval.minilm_graph import build_graph  # imports onnx: only to convert

    return build_graph(read_safetensors(weights))


def _quantised(source: Path) -> onnx.ModelProto:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic  # type: ignore[import-untyped]

    with (
        tempfile.TemporaryDirectory(dir=source.parent, prefix=".quantising-") as tmp,
        _quiet_quantisation(),
    ):
        target = Path(tmp) / "int8.onnx"
        quantize_dynamic(
            str(source),
            str(target),
            weight_type=QuantType.QInt8,
            per_channel=True,
            reduce_range=True,
            nodes_to_exclude=["EmbedLayerNormalization"],
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
        return onnx.load(str(target))


class _QuantisationChatter(logging.Filter):
    """onnxruntime's quantiser logs on the root logger: a line per tensor it leaves float (42
    for this model) and advice to pre-process, none of it news to whoever runs the server."""

    def filter(self, record: logging.LogRecord) -> bool:
        return f"onnxruntime{os.sep}quantization" not in record.pathname


@contextlib.contextmanager
def _quiet_quantisation() -> Iterator[None]:
    chatter = _QuantisationChatter()
    root = logging.getLogger()
    root.addFilter(chatter)
    try:
        yield
    finally:
        root.removeFilter(chatter)


def _save(model: onnx.ModelProto, path: Path) -> None:
    """Write the graph and its tensors through temporary files renamed into place (the data
    first): a process loading the model, or writing it at the same time, never sees half of
    one."""
    import onnx

    data = path.with_name(f"{path.name}.data")
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=f".{path.name}.") as tmp:
        staged = Path(tmp)
        with (staged / "data").open("wb") as out:
            for tensor in model.graph.initializer:
                if len(tensor.raw_data) >= _INLINE_BYTES:
                    _externalise(tensor, out, data.name)
        onnx.save(model, str(staged / "graph"))
        os.replace(staged / "data", data)
        os.replace(staged / "graph", path)


def _externalise(tensor: onnx.TensorProto, out: BinaryIO, location: str) -> None:
    from onnx.external_data_helper import set_external_data

    out.write(b"\0" * (-out.tell() % ALIGNMENT))
    offset = out.tell()
    out.write(tensor.raw_data)
    set_external_data(tensor, location, offset, len(tensor.raw_data))
    tensor.ClearField("raw_data")
    tensor.data_location = tensor.EXTERNAL
