"""A price table: what a model's tokens cost, in dollars per million tokens (a TOML file).

```toml
[models."gpt-4.1-mini"]
input = 0.40
output = 1.60
cached_input = 0.10   # optional: cached input tokens (default: the input price)
```

A model the table does not list has no cost (``null`` in the results, ``-`` in the table).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentloom.errors import InvalidRequestError

__all__ = ["ModelPrice", "PriceTable", "PriceTableError", "load_prices"]

PER = 1_000_000


class PriceTableError(InvalidRequestError):
    """A price table that cannot be read."""


class ModelPrice(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(ge=0, allow_inf_nan=False)
    output: float = Field(ge=0, allow_inf_nan=False)
    cached_input: float | None = Field(default=None, ge=0, allow_inf_nan=False)

    def cost(self, input_tokens: int, output_tokens: int, cached_tokens: int = 0) -> float:
        """Dollars for the tokens (``cached_tokens`` are part of ``input_tokens``)."""
        cached = min(cached_tokens, input_tokens)
        cached_price = self.input if self.cached_input is None else self.cached_input
        fresh = (input_tokens - cached) * self.input
        return (fresh + cached * cached_price + output_tokens * self.output) / PER


class PriceTable(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    models: dict[str, ModelPrice] = {}

    def cost(
        self, model: str, input_tokens: int, output_tokens: int, cached_tokens: int = 0
    ) -> float | None:
        price = self.models.get(model)
        return None if price is None else price.cost(input_tokens, output_tokens, cached_tokens)


def load_prices(path: Path | None) -> PriceTable:
    """The table in ``path`` (an empty one for ``None``)."""
    if path is None:
        return PriceTable()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PriceTableError(f"cannot read the price table {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise PriceTableError(f"{path}: not TOML ({exc})") from None
    try:
        return PriceTable.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        place = ".".join(str(part) for part in error["loc"])
        raise PriceTableError(f"{path}: {place}: {error['msg']}") from None
