"""``POST /v1/embeddings``: the request, validated with OpenAI's limits, and its answer.

``input`` is a text, an array of texts, an array of token ids, or an array of such arrays (what
LangChain's ``OpenAIEmbeddings`` sends by default); each input is non-empty and a request holds
at most :data:`MAX_INPUTS` of them. A single text or token array is read as an array of one.
"""

from __future__ import annotations

import base64
from typing import Annotated, Final, Literal, TypeAlias

import numpy as np
from numpy.typing import NDArray
from pydantic import BeforeValidator, Discriminator, Field, Tag

from agentloom.api.integers import Int32
from agentloom.api.wire import WireModel

__all__ = [
    "MAX_INPUTS",
    "CreateEmbeddingResponse",
    "Embedding",
    "EmbeddingUsage",
    "EmbeddingsRequest",
    "EncodingFormat",
]

MAX_INPUTS: Final = 2048  # OpenAI's limit
EncodingFormat: TypeAlias = Literal["float", "base64"]

Text = Annotated[str, Field(min_length=1)]
TokenId = Annotated[Int32, Field(strict=True, ge=0)]
TokenArray = Annotated[list[TokenId], Field(min_length=1)]


def _listed(value: object) -> object:
    """A single text or token array as an array of one."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and value and all(_is_id(v) for v in value):
        return [value]
    return value


def _is_id(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _kind(value: object) -> str:
    """Texts or token arrays, by the first input (the others must be of its kind). The tags
    start upper-case so that error locations leave them out (``input[2]``)."""
    first = value[0] if isinstance(value, list) and value else None
    return "Tokens" if isinstance(first, list) else "Texts"


Inputs: TypeAlias = Annotated[
    Annotated[list[Text], Tag("Texts"), Field(min_length=1, max_length=MAX_INPUTS)]
    | Annotated[list[TokenArray], Tag("Tokens"), Field(min_length=1, max_length=MAX_INPUTS)],
    Discriminator(_kind),
    BeforeValidator(_listed),
]


class EmbeddingsRequest(WireModel):
    model: str = Field(min_length=1)
    input: Inputs
    encoding_format: EncodingFormat | None = None  # None: float
    dimensions: Int32 | None = Field(default=None, ge=1)
    user: str | None = None


class Embedding(WireModel):
    object: Literal["embedding"] = "embedding"
    index: int
    embedding: list[float] | str


class EmbeddingUsage(WireModel):
    prompt_tokens: int
    total_tokens: int


class CreateEmbeddingResponse(WireModel):
    object: Literal["list"] = "list"
    data: list[Embedding]
    model: str
    usage: EmbeddingUsage

    @classmethod
    def of(
        cls,
        vectors: NDArray[np.float32],
        *,
        model: str,
        prompt_tokens: int,
        encoding_format: EncodingFormat | None,
    ) -> CreateEmbeddingResponse:
        """The answer for ``vectors`` (one row per input); built without validating each float
        again (there may be a million of them)."""
        data = [
            Embedding.model_construct(index=index, embedding=encoded(row, encoding_format))
            for index, row in enumerate(vectors)
        ]
        usage = EmbeddingUsage(prompt_tokens=prompt_tokens, total_tokens=prompt_tokens)
        return cls.model_construct(data=data, model=model, usage=usage)


def encoded(
    vector: NDArray[np.float32], encoding_format: EncodingFormat | None
) -> list[float] | str:
    """A vector as floats, or as base64 of its little-endian float32 bytes (as the ``openai``
    package decodes it)."""
    if encoding_format == "base64":
        return base64.b64encode(vector.astype("<f4").tobytes()).decode("ascii")
    values: list[float] = vector.tolist()
    return values
