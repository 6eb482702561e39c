"""all-MiniLM-L6-v2 on onnxruntime: the converted graph gives the numpy forward pass's vectors,
its conversion is cached and reused, a cache that cannot be written or a broken cached model
does not stop the embedder (numpy takes over), and int8 is opt-in and close to float32."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import numpy as np
import pytest

from agentloom.config import ConfigError, EmbeddingSettings, load_settings
from agentloom.retrieval import minilm_convert
from agentloom.retrieval.embeddings import MiniLMEmbedder, build_embedder, minilm_directory
from agentloom.retrieval.minilm import MiniLM, load_minilm

# Short and long (several windows), empty, non-ASCII, code, numbers: batched together, so rows
# of different lengths share padded batches.
SAMPLE = [
    "a cat sits on the mat",
    "",
    "Zürich's café serves crème brûlée; 東京 is far away.",
    "def add(a: int, b: int) -> int:\n    return a + b  # sums two numbers",
    "The central bank raised interest rates again, and bond yields climbed. " * 40,
    "Cats are small domesticated carnivores that people keep as pets. " * 12,
    "4096 tokens, 3.14159, 2025-01-01, 192.168.0.1",
    "The quick brown fox jumps over the lazy dog.",
]


def _model(runtime: str, **changes: object) -> MiniLM:
    settings = EmbeddingSettings.model_validate({"runtime": runtime, **changes})
    return MiniLMEmbedder(settings).model()


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray((a * b).sum(axis=1))


def test_onnx_vectors_equal_the_numpy_ones() -> None:
    onnx, numpy = _model("onnx"), _model("numpy")

    assert onnx.runtime.startswith("onnxruntime")
    assert onnx.runtime.endswith("fp32")
    assert numpy.runtime == "numpy"
    cosines = _cosines(onnx.encode(SAMPLE), numpy.encode(SAMPLE))
    assert cosines.min() > 0.9999
    alone = np.concatenate([onnx.encode([text]) for text in SAMPLE])
    np.testing.assert_allclose(alone, onnx.encode(SAMPLE), atol=1e-5)


def test_auto_runs_onnxruntime_when_it_is_installed() -> None:
    assert _model("auto").runtime.startswith("onnxruntime")
    assert load_settings(env={}).embeddings.runtime == "auto"


def test_the_conversion_is_cached_and_reused(tmp_path: Path) -> None:
    weights = minilm_directory() / "model.safetensors"

    path = minilm_convert.model_file(weights, "fp32", tmp_path)
    made = path.stat().st_mtime_ns
    again = minilm_convert.model_file(weights, "fp32", tmp_path)

    assert again == path
    assert path.stat().st_mtime_ns == made  # not converted twice
    assert path.with_name(f"{path.name}.data").stat().st_size > 80_000_000  # the tensors
    assert path.stat().st_size < 1_000_000  # the graph alone
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [path.name, f"{path.name}.data"]  # no temporary file left behind
    )


def test_quantising_says_one_line(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """onnxruntime's quantiser logs a line per tensor it leaves float and advice to
    pre-process, on the root logger: none of it reaches the server's log, one line of ours
    does."""
    weights = minilm_directory() / "model.safetensors"
    minilm_convert.model_file(weights, "fp32", tmp_path)  # what is quantised, made first

    with caplog.at_level(logging.DEBUG):
        minilm_convert.model_file(weights, "int8", tmp_path)

    said = [record.getMessage() for record in caplog.records]
    assert [line for line in said if "all-MiniLM-L6-v2" in line] == [
        f"quantising all-MiniLM-L6-v2 to int8 into {next(tmp_path.glob('*-int8.onnx'))}"
    ]
    assert not [line for line in said if "Quantization" in line or "pre-processing" in line]


def test_a_cache_that_cannot_be_written_converts_in_a_temporary_folder(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")

    model = _model("onnx", cache_directory=blocker / "cache")

    assert model.runtime.startswith("onnxruntime")
    assert model.encode(["a cat"]).shape == (1, 384)


def test_a_broken_cached_model_falls_back_to_numpy(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    weights = minilm_directory() / "model.safetensors"
    path = minilm_convert.model_file(weights, "fp32", tmp_path)
    path.write_bytes(b"not an onnx model")

    with caplog.at_level(logging.WARNING, "agentloom.retrieval.minilm"):
        model = _model("auto", cache_directory=tmp_path)

    assert model.runtime == "numpy"
    assert "onnxruntime failed" in caplog.text
    assert _cosines(model.encode(SAMPLE), _model("onnx").encode(SAMPLE)).min() > 0.9999


def test_without_onnxruntime_auto_runs_numpy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    monkeypatch.delitem(sys.modules, "agentloom.retrieval.minilm_onnx", raising=False)

    model = load_minilm(minilm_directory(), "auto", "fp32", tmp_path)

    assert model.runtime == "numpy"
    with pytest.raises(ValueError, match="needs onnxruntime"):
        load_minilm(minilm_directory(), "auto", "int8", tmp_path)


def test_auto_precision_is_int8_for_vector_stores_and_float32_for_the_embeddings_api() -> None:
    """Vector stores never show their vectors: they take int8 (as fast again, searching as
    well); ``/v1/embeddings`` answers with the reference vectors (its tests compare them with
    float32 ones: tests/server/test_embeddings.py). An explicit precision holds for both; the
    numpy runtime is float32."""
    stores = build_embedder(EmbeddingSettings())
    assert isinstance(stores, MiniLMEmbedder)
    assert stores.precision == "int8"
    assert stores.model().runtime.endswith("int8")
    assert MiniLMEmbedder(EmbeddingSettings()).precision == "fp32"
    for precision in ("fp32", "int8"):
        explicit = EmbeddingSettings(precision=precision)
        assert MiniLMEmbedder(explicit).precision == precision
        assert MiniLMEmbedder(explicit, auto="int8").precision == precision
    numpy = build_embedder(EmbeddingSettings(runtime="numpy"))
    assert isinstance(numpy, MiniLMEmbedder)
    assert numpy.precision == "fp32"


def test_int8_is_close_to_float32() -> None:
    int8, fp32 = _model("onnx", precision="int8"), _model("onnx")

    cosines = _cosines(int8.encode(SAMPLE), fp32.encode(SAMPLE))

    assert int8.runtime.endswith("int8")
    assert cosines.min() > 0.97  # measured 0.98 at worst on 400 chunks; mean 0.99
    assert MiniLMEmbedder(EmbeddingSettings(precision="int8")).name == MiniLMEmbedder().name


def test_int8_needs_onnxruntime() -> None:
    with pytest.raises(ValueError, match="int8"):
        EmbeddingSettings(runtime="numpy", precision="int8")
    env = {"AGENTLOOM_EMBEDDINGS_RUNTIME": "numpy", "AGENTLOOM_EMBEDDINGS_PRECISION": "int8"}
    with pytest.raises(ConfigError, match="int8"):
        load_settings(env=env)


def test_onnx_or_int8_without_onnxruntime_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)

    for settings in (EmbeddingSettings(runtime="onnx"), EmbeddingSettings(precision="int8")):
        with pytest.raises(ConfigError, match="pip install onnxruntime onnx"):
            MiniLMEmbedder(settings)
    assert MiniLMEmbedder(EmbeddingSettings()).name == "minilm:all-MiniLM-L6-v2"
