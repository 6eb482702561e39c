"""Cron expressions: the times they fire, and the mistakes they name."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agentloom.cron import Cron, CronError


def at(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def shown(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%d %H:%M %a")


@pytest.mark.parametrize(
    ("expression", "after", "fires"),
    [
        ("*/15 * * * *", "2026-11-25 10:07:30", "2026-11-25 10:15 Wed"),
        ("*/15 * * * *", "2026-11-25 10:15:00", "2026-11-25 10:30 Wed"),  # strictly after
        ("0 9 * * mon-fri", "2026-11-27 10:00", "2026-11-30 09:00 Mon"),  # Friday, then Monday
        ("30 23 31 12 *", "2026-11-25 00:00", "2026-12-31 23:30 Thu"),
        ("0 0 29 2 *", "2026-03-01 00:00", "2028-02-29 00:00 Tue"),  # the next leap day
        ("0 0 13 * fri", "2026-11-14 00:00", "2026-11-20 00:00 Fri"),  # either day field
        ("0 0 * * 7", "2026-11-25 00:00", "2026-11-29 00:00 Sun"),  # 7 is Sunday too
        ("5,10-12/2 3 * jan,jul *", "2026-11-25 00:00", "2027-01-01 03:05 Fri"),
        ("@hourly", "2026-11-25 10:59:59", "2026-11-25 11:00 Wed"),
        ("@weekly", "2026-11-25 10:00", "2026-11-29 00:00 Sun"),
        ("@monthly", "2026-11-25 10:00", "2026-12-01 00:00 Tue"),
    ],
)
def test_the_next_time_it_fires(expression: str, after: str, fires: str) -> None:
    assert shown(Cron.parse(expression).after(at(after))) == fires


@pytest.mark.parametrize(
    ("expression", "says"),
    [
        ("* * * *", "5 fields"),
        ("61 * * * *", "minute field '61' is outside 0-59"),
        ("* 24 * * *", "hour"),
        ("a * * * *", "not a number"),
        ("*/0 * * * *", "step must be 1 or more"),
        ("5-1 * * * *", "outside"),
        ("0 0 31 2 *", "never fires"),
        ("0 0 * foo *", "not a number"),
    ],
)
def test_a_bad_expression_says_what_is_wrong(expression: str, says: str) -> None:
    with pytest.raises(CronError) as error:
        Cron.parse(expression)

    assert says in str(error.value)
