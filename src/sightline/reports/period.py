"""Report periods: a range of whole days in the site's time zone, its buckets and its comparison.

``today``, ``7d``, ``30d``, ``month`` (this month to date), ``12mo`` (this month and the 11
before) and ``all`` (since the site's first day) end with today (in the site's zone);
``yesterday`` and ``last_month`` are past days; ``custom`` runs from ``from`` to ``to`` inclusive.
A period that reaches the present ends at the start of the next hour. ``realtime`` is the last 30
minutes, minute by minute (this minute, still running, and the 29 before it); it compares with
nothing.

The comparison (``previous``) is as many whole days just before the period, or (``year``) the
same days a year before; a period that reaches now is compared up to the same time of day, so
today until 15:00 compares with yesterday until 15:00, and its buckets line up one for one.
Ranges of up to two days are shown hour by hour, longer ones day by day.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from sightline.errors import ApiError

RANGES = ("realtime", "today", "yesterday", "7d", "30d", "month", "last_month", "12mo", "all", "custom")
COMPARISONS = ("previous", "year")
MAX_DAYS = 731
HOUR = timedelta(hours=1)
MINUTE = timedelta(minutes=1)
REALTIME_MINUTES = 30


@dataclass(frozen=True)
class Period:
    zone: ZoneInfo
    first_day: date
    last_day: date
    start: datetime  # UTC, inclusive
    end: datetime  # UTC, exclusive; capped at the next hour when the period reaches now
    interval: str  # "minute" (realtime) | "hour" | "day"
    comparison: str = "previous"  # "previous" | "year": what ``previous()`` gives

    def buckets(self) -> list[tuple[datetime, datetime]]:
        """The series' points as UTC [start, end) spans, in order."""
        spans: list[tuple[datetime, datetime]] = []
        if self.interval in ("minute", "hour"):
            step = MINUTE if self.interval == "minute" else HOUR
            at = self.start
            while at < self.end:
                spans.append((at, min(at + step, self.end)))
                at += step
            return spans
        day = self.first_day
        while day <= self.last_day:
            start, end = local_midnight(day, self.zone), local_midnight(day + timedelta(days=1), self.zone)
            if start >= self.end:
                break
            spans.append((max(start, self.start), min(end, self.end)))
            day += timedelta(days=1)
        return spans

    def previous(self) -> Period:
        """The period compared with: as many whole days just before, or the same days a year before.

        A period that reaches now is compared up to the same local time of day, so each of its
        buckets has the bucket at the same place in the other period."""
        days = (self.last_day - self.first_day).days
        if self.comparison == "year":
            first = _year_before(self.first_day)
        else:
            first = self.first_day - timedelta(days=days + 1)
        last = first + timedelta(days=days)
        start = local_midnight(first, self.zone)
        full_end = local_midnight(last + timedelta(days=1), self.zone)
        if self.end == local_midnight(self.last_day + timedelta(days=1), self.zone):
            end = full_end
        else:
            cut = self.end.astimezone(self.zone)
            end = datetime.combine(last, cut.time(), self.zone).astimezone(UTC)
        return Period(self.zone, first, last, start, end, self.interval, self.comparison)

    def shift(self) -> timedelta:
        return self.end - self.start

    def label(self, at: datetime) -> str:
        local = at.astimezone(self.zone)
        return local.date().isoformat() if self.interval == "day" else local.isoformat()

    def describe(self) -> dict[str, str]:
        return {
            "from": self.first_day.isoformat(),
            "to": self.last_day.isoformat(),
            "start": self.start.isoformat(),
            "end": self.end.isoformat(),
        }


def first_day_of(created_at: str | datetime, zone: ZoneInfo, imported: date | None = None) -> date:
    """A site's first day for ``all``: the day it was added, or its earliest imported day."""
    when = datetime.fromisoformat(created_at) if isinstance(created_at, str) else created_at
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    day = when.astimezone(zone).date()
    return min(day, imported) if imported is not None else day


def _year_before(day: date) -> date:
    try:
        return day.replace(year=day.year - 1)
    except ValueError:  # 29 February
        return day.replace(year=day.year - 1, day=28)


def _month_start(day: date, months_back: int) -> date:
    index = day.year * 12 + day.month - 1 - months_back
    return date(index // 12, index % 12 + 1, 1)


def local_midnight(day: date, zone: ZoneInfo) -> datetime:
    return datetime.combine(day, time(), zone).astimezone(UTC)


def next_hour(now: datetime) -> datetime:
    floor = now.replace(minute=0, second=0, microsecond=0)
    return floor if floor == now else floor + HOUR


def parse_date(raw: str | None, name: str) -> date:
    if raw is None:
        raise ApiError(
            422, "invalid_parameter", f"The parameter '{name}' is required for a custom range.", field=name
        )
    try:
        if len(raw) != 10:
            raise ValueError(raw)
        return date.fromisoformat(raw)
    except ValueError:
        raise ApiError(
            422, "invalid_parameter", f"The parameter '{name}' must be a date like 2026-01-31.", field=name
        ) from None


def period_of(
    range_name: str,
    raw_from: str | None,
    raw_to: str | None,
    zone: ZoneInfo,
    now: datetime,
    comparison: str = "previous",
    since: date | None = None,
) -> Period:
    """The named range's period at ``now``; ``since`` is the site's first day (for ``all``)."""
    today = now.astimezone(zone).date()
    if range_name != "custom":
        for name, raw in (("from", raw_from), ("to", raw_to)):
            if raw is not None:
                raise ApiError(
                    422,
                    "invalid_parameter",
                    f"The parameter '{name}' is only used with range=custom.",
                    field=name,
                )
    if range_name == "realtime":
        return _realtime(zone, now, comparison)
    if range_name == "today":
        first = last = today
    elif range_name == "yesterday":
        first = last = today - timedelta(days=1)
    elif range_name == "7d":
        first, last = today - timedelta(days=6), today
    elif range_name == "30d":
        first, last = today - timedelta(days=29), today
    elif range_name == "month":
        first, last = _month_start(today, 0), today
    elif range_name == "last_month":
        first = _month_start(today, 1)
        last = _month_start(today, 0) - timedelta(days=1)
    elif range_name == "12mo":
        first, last = _month_start(today, 11), today
    elif range_name == "all":
        first, last = min(since or today, today), today
    else:
        first, last = parse_date(raw_from, "from"), parse_date(raw_to, "to")
        if last < first:
            raise ApiError(422, "invalid_parameter", "The parameter 'to' is before 'from'.", field="to")
        if (last - first).days >= MAX_DAYS:
            raise ApiError(
                422, "invalid_parameter", f"A custom range covers at most {MAX_DAYS} days.", field="to"
            )
    start = local_midnight(first, zone)
    full_end = local_midnight(last + timedelta(days=1), zone)
    end = min(full_end, next_hour(now)) if start < now < full_end else full_end
    interval = "hour" if full_end - start <= timedelta(hours=49) else "day"
    return Period(zone, first, last, start, end, interval, comparison)


def _realtime(zone: ZoneInfo, now: datetime, comparison: str) -> Period:
    """The last 30 minutes: this minute (until its end) and the 29 before it."""
    end = now.astimezone(UTC).replace(second=0, microsecond=0) + MINUTE
    start = end - REALTIME_MINUTES * MINUTE
    first, last = start.astimezone(zone).date(), (end - MINUTE).astimezone(zone).date()
    return Period(zone, first, last, start, end, "minute", comparison)
