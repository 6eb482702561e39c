"""What usage costs: the one place a price is applied (``[prices."<model>"]``, dollars per
million tokens).

:meth:`Prices.price` fills the cost fields of usage counts in nano-dollars (10^-9 USD, whole
numbers: a sum over a month is exact), split as the costs report's line items are: uncached
input, cached input, output, embeddings. Moderations are priced as input. A model without a
price costs nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from agentloom.config import ModelPriceSettings
from agentloom.frozen import frozen
from agentloom.storage.usage import UsageCounts

__all__ = ["NANOS_PER_DOLLAR", "Prices"]

NANOS_PER_DOLLAR: Final = 1_000_000_000
_PER_TOKEN: Final = NANOS_PER_DOLLAR / 1_000_000  # a price per million tokens, per token


@frozen
class _Rates:
    """Nano-dollars a token."""

    input: float
    cached: float
    output: float
    embeddings: float


def _rates(price: ModelPriceSettings) -> _Rates:
    cached = price.input if price.cached_input is None else price.cached_input
    embeddings = price.input if price.embeddings is None else price.embeddings
    return _Rates(
        price.input * _PER_TOKEN,
        cached * _PER_TOKEN,
        price.output * _PER_TOKEN,
        embeddings * _PER_TOKEN,
    )


class Prices:
    def __init__(self, table: Mapping[str, ModelPriceSettings]) -> None:
        self._rates = {model: _rates(price) for model, price in table.items()}

    def listed(self, model: str) -> bool:
        return model in self._rates

    def price(self, model: str, counts: UsageCounts) -> None:
        """Set the cost of ``counts`` (the usage of ``model``)."""
        rates = self._rates.get(model)
        if rates is None:
            return
        cached = min(counts.cached_tokens, counts.input_tokens)
        fresh = counts.input_tokens - cached + counts.moderation_tokens
        counts.cost_input = round(fresh * rates.input)
        counts.cost_cached = round(cached * rates.cached)
        counts.cost_output = round(counts.output_tokens * rates.output)
        counts.cost_embeddings = round(counts.embedding_tokens * rates.embeddings)
