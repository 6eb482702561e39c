"""``--strategy`` texts and price tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentloom.errors import InvalidRequestError
from agentloom.evals.prices import PriceTableError, load_prices
from agentloom.evals.strategies import Strategy, parse_strategy


@pytest.mark.parametrize(
    ("text", "strategy"),
    [
        ("react", Strategy(label="react", agent="react")),
        (
            "fast=react:model=small,max_turns=3",
            Strategy(label="fast", agent="react", model="small", max_turns=3),
        ),
        (
            "orchestrator:tools=calculator+think",
            Strategy(
                label="orchestrator:tools=calculator+think",
                agent="orchestrator",
                tools=("calculator", "think"),
            ),
        ),
        ("simple:tools=none", Strategy(label="simple:tools=none", agent="simple", tools=())),
        (
            "monitor_operative:memory_extraction=notes",
            Strategy(
                label="monitor_operative:memory_extraction=notes",
                agent="monitor_operative",
                axes={"memory_extraction": "notes"},
            ),
        ),
    ],
)
def test_a_strategy_text(text: str, strategy: Strategy) -> None:
    assert parse_strategy(text) == strategy


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            "wizard",
            "unknown agent 'wizard' in --strategy 'wizard'; known agents: claude_code, codeact",
        ),
        ("react:max_turns=0", "max_turns must be a whole number, at least 1"),
        ("react:model", "'model' is not KEY=VALUE"),
        (
            "react:memory_extraction=notes",
            "unknown key 'memory_extraction'; keys: model, max_turns, tools",
        ),
        ("monitor_operative:colour=blue", "unknown strategy axis 'colour'"),
    ],
)
def test_a_bad_strategy_text_is_named(text: str, problem: str) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        parse_strategy(text)
    assert problem in caught.value.message


def test_a_price_table_prices_tokens_per_million(tmp_path: Path) -> None:
    path = tmp_path / "prices.toml"
    path.write_text(
        "[models.big]\ninput = 2.0\noutput = 8.0\ncached_input = 0.5\n"
        "[models.small]\ninput = 0.1\noutput = 0.4\n"
    )

    table = load_prices(path)

    assert table.cost("big", 1_000_000, 500_000, cached_tokens=200_000) == pytest.approx(
        1.6 + 0.1 + 4.0
    )
    assert table.cost("small", 10_000, 1_000) == pytest.approx(0.001 + 0.0004)
    assert table.cost("unlisted", 10, 10) is None
    assert load_prices(None).cost("big", 1, 1) is None


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            "[models.big]\ninput = -1\noutput = 1\n",
            "models.big.input: Input should be greater than or equal to 0",
        ),
        ("[models.big]\ninput = 1\n", "models.big.output: Field required"),
        ("[models.big]\ninput = nan\noutput = 1\n", "models.big.input"),
        ("[models\n", "not TOML"),
    ],
)
def test_a_bad_price_table_is_named(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "prices.toml"
    path.write_text(text)
    with pytest.raises(PriceTableError) as caught:
        load_prices(path)
    assert problem in caught.value.message
