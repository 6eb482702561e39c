"""all-MiniLM-L6-v2 as an ONNX graph, built from the safetensors weights (no export, no torch).

The graph uses ONNX Runtime's fused BERT operators (domain ``com.microsoft``, CPU kernels in
every onnxruntime build), so nothing is left for a fusion pass to recognise:

- ``EmbedLayerNormalization``: word + position embeddings (the token-type embedding of type 0
  folded into the positions), LayerNorm, and each row's real length for the attention mask;
- per layer, ``Attention`` (query, key and value in one matrix product, 12 heads, padding
  masked by the lengths), an output ``MatMul`` whose bias, residual and LayerNorm are one
  ``SkipLayerNormalization``, then ``MatMul`` -> ``BiasGelu`` (BERT's exact erf GELU) ->
  ``MatMul`` -> ``SkipLayerNormalization``;
- mean pooling over the real tokens and L2 normalisation.

Inputs ``input_ids`` and ``attention_mask`` (int32, batch x length, windows padded on the right
with [CLS]/[SEP] already in place); output ``embeddings`` (float32, batch x 384, unit rows).
A change here bumps ``minilm_onnx.GRAPH_VERSION`` so that cached conversions are rebuilt.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import numpy as np
import onnx
from numpy.typing import NDArray
from onnx import TensorProto, helper, numpy_helper

__all__ = ["build_graph"]

_MS: Final = "com.microsoft"
_HEADS: Final = 12
_EPS: Final = 1e-12

Weights = Mapping[str, NDArray[np.generic]]


class _Graph:
    def __init__(self, weights: Weights) -> None:
        self.weights = weights
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []

    def tensor(self, name: str, value: NDArray[np.generic]) -> str:
        array = np.ascontiguousarray(value, dtype=value.dtype.newbyteorder("="))
        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def weight(self, key: str, *, transposed: bool = False) -> str:
        value = np.asarray(self.weights[key], dtype=np.float32)
        return self.tensor(key, value.T if transposed else value)

    def node(self, op: str, inputs: list[str], output: str, **attributes: int | float) -> str:
        domain = _MS if op in _CONTRIB else ""
        name = f"{op}_{len(self.nodes)}"
        node = helper.make_node(op, inputs, [output], name=name, domain=domain)
        node.attribute.extend(helper.make_attribute(k, v) for k, v in attributes.items())
        self.nodes.append(node)
        return output


_CONTRIB: Final = frozenset(
    {"EmbedLayerNormalization", "Attention", "SkipLayerNormalization", "BiasGelu"}
)


def build_graph(weights: Weights) -> onnx.ModelProto:
    """The model of ``weights`` (sentence-transformers' tensor names) as an ONNX model."""
    graph = _Graph(weights)
    x = _embeddings(graph)
    layers = 1 + max(int(k.split(".")[2]) for k in weights if k.startswith("encoder.layer."))
    for i in range(layers):
        x = _layer(graph, f"encoder.layer.{i}", x)
    _pooled(graph, x)
    hidden = int(weights["embeddings.word_embeddings.weight"].shape[1])
    return helper.make_model(
        helper.make_graph(
            graph.nodes,
            "all-MiniLM-L6-v2",
            [_input("input_ids"), _input("attention_mask")],
            [helper.make_tensor_value_info("embeddings", TensorProto.FLOAT, ["batch", hidden])],
            graph.initializers,
        ),
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(_MS, 1)],
        producer_name="agentloom",
    )


def _input(name: str) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.INT32, ["batch", "length"])


def _embeddings(graph: _Graph) -> str:
    w = graph.weights
    positions = np.asarray(w["embeddings.position_embeddings.weight"], dtype=np.float32)
    positions = positions + w["embeddings.token_type_embeddings.weight"][0]  # all type 0
    graph.nodes.append(
        helper.make_node(
            "EmbedLayerNormalization",
            [
                "input_ids",
                "",  # no segment ids: their embedding is folded into the positions
                graph.weight("embeddings.word_embeddings.weight"),
                graph.tensor("positions", positions.astype(np.float32)),
                "",
                graph.weight("embeddings.LayerNorm.weight"),
                graph.weight("embeddings.LayerNorm.bias"),
                "attention_mask",
            ],
            ["embedded", "lengths"],
            name="EmbedLayerNormalization",
            domain=_MS,
            epsilon=_EPS,
        )
    )
    return "embedded"


def _layer(graph: _Graph, p: str, x: str) -> str:
    w = graph.weights
    att = f"{p}.attention.self"
    qkv = np.concatenate([w[f"{att}.{n}.weight"] for n in ("query", "key", "value")]).T
    qkv_bias = np.concatenate([w[f"{att}.{n}.bias"] for n in ("query", "key", "value")])
    qkv_name = graph.tensor(f"{att}.qkv.weight", qkv.astype(np.float32))
    qkv_bias_name = graph.tensor(f"{att}.qkv.bias", qkv_bias.astype(np.float32))
    attended = graph.node(
        "Attention", [x, qkv_name, qkv_bias_name, "lengths"], f"{p}.attended", num_heads=_HEADS
    )
    out = f"{p}.attention.output"
    projected = graph.node(
        "MatMul", [attended, graph.weight(f"{out}.dense.weight", transposed=True)], f"{out}.mm"
    )
    x = _skip_norm(graph, projected, x, f"{out}.LayerNorm", f"{out}.dense.bias", f"{out}.x")
    up = graph.node(
        "MatMul",
        [x, graph.weight(f"{p}.intermediate.dense.weight", transposed=True)],
        f"{p}.intermediate.mm",
    )
    gelu = graph.node(
        "BiasGelu", [up, graph.weight(f"{p}.intermediate.dense.bias")], f"{p}.intermediate.gelu"
    )
    down = graph.node(
        "MatMul", [gelu, graph.weight(f"{p}.output.dense.weight", transposed=True)], f"{p}.mm"
    )
    return _skip_norm(graph, down, x, f"{p}.output.LayerNorm", f"{p}.output.dense.bias", f"{p}.x")


def _skip_norm(graph: _Graph, value: str, skip: str, norm: str, bias: str, out: str) -> str:
    """LayerNorm(value + bias + skip): a dense layer's bias, the residual and the norm."""
    inputs = [
        value,
        skip,
        graph.weight(f"{norm}.weight"),
        graph.weight(f"{norm}.bias"),
        graph.weight(bias),
    ]
    return graph.node("SkipLayerNormalization", inputs, out, epsilon=_EPS)


def _pooled(graph: _Graph, x: str) -> None:
    """The mean of the real tokens' vectors, L2-normalised (the mean's divisor cancels)."""
    mask = graph.node("Cast", ["attention_mask"], "mask", to=TensorProto.FLOAT)
    axis2 = graph.tensor("axis2", np.array([2], dtype=np.int64))
    axis1 = graph.tensor("axis1", np.array([1], dtype=np.int64))
    mask3 = graph.node("Unsqueeze", [mask, axis2], "mask3")
    masked = graph.node("Mul", [x, mask3], "masked")
    summed = graph.node("ReduceSum", [masked, axis1], "summed", keepdims=0)
    graph.node("LpNormalization", [summed], "embeddings", axis=1, p=2)
