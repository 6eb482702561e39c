"""Cron expressions (five fields, UTC): when a schedule fires next.

``minute hour day-of-month month day-of-week``, each ``*``, a number, a range ``a-b``, a step
``*/n`` or ``a-b/n``, or a comma-separated list of those; months and days of the week may be
named (``jan``, ``mon``); day 0 and 7 are Sunday. When both day fields are restricted, a day
matching either fires (as in Vixie cron). ``@hourly``, ``@daily`` (``@midnight``), ``@weekly``,
``@monthly`` and ``@yearly`` (``@annually``) stand for the usual expressions.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from agentloom.frozen import frozen

__all__ = ["Cron", "CronError"]

_MACROS = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
}
_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
_DAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
_NONE: list[str] = []
_FIELDS: tuple[tuple[str, int, int, list[str]], ...] = (  # name, lowest, highest, names
    ("minute", 0, 59, _NONE),
    ("hour", 0, 23, _NONE),
    ("day of month", 1, 31, _NONE),
    ("month", 1, 12, _MONTHS),
    ("day of week", 0, 7, _DAYS),
)
_SEARCH_DAYS = 5 * 366 + 1  # past this, an expression never fires (Feb 30)


class CronError(ValueError):
    """The expression is not a cron expression (the message says which part)."""


@frozen
class Cron:
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 is Sunday
    any_day: bool  # day of month is "*"
    any_weekday: bool  # day of week is "*"

    @classmethod
    def parse(cls, expression: str) -> Cron:
        text = _MACROS.get(expression.strip().lower(), expression.strip().lower())
        parts = text.split()
        if len(parts) != 5:
            raise CronError(
                f"a cron expression has 5 fields (minute hour day month weekday), not {len(parts)}"
            )
        sets = [_field(part, *spec) for part, spec in zip(parts, _FIELDS, strict=True)]
        cron = cls(
            minutes=tuple(sorted(sets[0])),
            hours=tuple(sorted(sets[1])),
            days=frozenset(sets[2]),
            months=frozenset(sets[3]),
            weekdays=frozenset(d % 7 for d in sets[4]),
            any_day=parts[2] == "*",
            any_weekday=parts[4] == "*",
        )
        cron.after(0.0)  # raises if it never fires
        return cron

    def after(self, moment: float) -> float:
        """The first time strictly after ``moment`` (unix seconds) that the expression fires."""
        start = datetime.fromtimestamp(moment, UTC).replace(second=0, microsecond=0)
        start += timedelta(minutes=1)
        day = start.date()
        for _ in range(_SEARCH_DAYS):
            if day.month in self.months and self._day_fires(day):
                found = self._time_on(day, start if day == start.date() else None)
                if found is not None:
                    return found.timestamp()
            day += timedelta(days=1)
        raise CronError("the expression never fires")

    def _day_fires(self, day: date) -> bool:
        in_month = day.day in self.days
        in_week = (day.weekday() + 1) % 7 in self.weekdays
        if self.any_day and self.any_weekday:
            return True
        if self.any_day:
            return in_week
        if self.any_weekday:
            return in_month
        return in_month or in_week

    def _time_on(self, day: date, earliest: datetime | None) -> datetime | None:
        for hour in self.hours:
            if earliest is not None and hour < earliest.hour:
                continue
            for minute in self.minutes:
                if earliest is not None and (hour, minute) < (earliest.hour, earliest.minute):
                    continue
                return datetime(day.year, day.month, day.day, hour, minute, tzinfo=UTC)
        return None


def _field(text: str, name: str, lowest: int, highest: int, names: list[str]) -> set[int]:
    values: set[int] = set()
    for part in text.split(","):
        span, _, step_text = part.partition("/")
        step = _number(step_text, name) if step_text else 1
        if step < 1:
            raise CronError(f"the {name} step must be 1 or more")
        if span == "*":
            first, last = lowest, highest
        elif "-" in span:
            start, _, end = span.partition("-")
            first, last = _value(start, name, names, lowest), _value(end, name, names, lowest)
        else:
            first = _value(span, name, names, lowest)
            last = highest if step_text else first
        if not lowest <= first <= last <= highest:
            raise CronError(f"the {name} field '{part}' is outside {lowest}-{highest}")
        values.update(range(first, last + 1, step))
    return values


def _value(text: str, name: str, names: list[str], lowest: int) -> int:
    if text in names:
        return names.index(text) + lowest
    return _number(text, name)


def _number(text: str, name: str) -> int:
    if not text.isdigit():
        raise CronError(f"the {name} field has '{text}', which is not a number")
    return int(text)
