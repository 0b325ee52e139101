"""Report periods: a range of whole days in the site's time zone, its buckets and its comparison.

``today``, ``7d`` and ``30d`` end with today (in the site's zone); ``custom`` runs from ``from``
to ``to`` inclusive. A period that reaches the present ends at the start of the next hour, and
its comparison period is the equally long span of time just before it; a period of past days
compares with as many whole days just before it. Ranges of up to two days are
shown hour by hour, longer ones day by day.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from sightline.errors import ApiError

RANGES = ("today", "7d", "30d", "custom")
MAX_DAYS = 731
HOUR = timedelta(hours=1)


@dataclass(frozen=True)
class Period:
    zone: ZoneInfo
    first_day: date
    last_day: date
    start: datetime  # UTC, inclusive
    end: datetime  # UTC, exclusive; capped at the next hour when the period reaches now
    interval: str  # "hour" | "day"

    def buckets(self) -> list[tuple[datetime, datetime]]:
        """The series' points as UTC [start, end) spans, in order."""
        spans: list[tuple[datetime, datetime]] = []
        if self.interval == "hour":
            at = self.start
            while at < self.end:
                spans.append((at, min(at + HOUR, self.end)))
                at += HOUR
            return spans
        day = self.first_day
        while day <= self.last_day:
            a, b = local_midnight(day, self.zone), local_midnight(day + timedelta(days=1), self.zone)
            if a >= self.end:
                break
            spans.append((max(a, self.start), min(b, self.end)))
            day += timedelta(days=1)
        return spans

    def previous(self) -> Period:
        """The equally long span just before: as many whole days, or (reaching now) as much time."""
        if self.end == local_midnight(self.last_day + timedelta(days=1), self.zone):
            days = timedelta(days=(self.last_day - self.first_day).days + 1)
            first, last = self.first_day - days, self.last_day - days
            start, end = local_midnight(first, self.zone), local_midnight(last + timedelta(days=1), self.zone)
            return Period(self.zone, first, last, start, end, self.interval)
        length = self.end - self.start
        start = self.start - length
        first = start.astimezone(self.zone).date()
        last = (self.start - timedelta(microseconds=1)).astimezone(self.zone).date()
        return Period(self.zone, first, last, start, self.start, self.interval)

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
    range_name: str, raw_from: str | None, raw_to: str | None, zone: ZoneInfo, now: datetime
) -> Period:
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
    if range_name == "today":
        first = last = today
    elif range_name == "7d":
        first, last = today - timedelta(days=6), today
    elif range_name == "30d":
        first, last = today - timedelta(days=29), today
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
    return Period(zone, first, last, start, end, interval)
