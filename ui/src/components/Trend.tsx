// A site's visitors today and a sparkline of its last 7 days, as the sites list and the reports
// index show them. Reads the reports API's daily time series (range=7d ends with today).
import { useEffect, useState } from "preact/hooks";

import { ApiError } from "../api";
import { count } from "../format";
import { reports } from "../reports/api";

const WIDTH = 96;
const HEIGHT = 28;
const day = new Intl.DateTimeFormat(undefined, { weekday: "short", timeZone: "UTC" });

interface Days {
  dates: string[];
  visitors: number[];
}

/** "x,y x,y ..." of a polyline through the values, scaled into the sparkline's box. */
export function sparkPoints(values: number[], width = WIDTH, height = HEIGHT): string {
  if (values.length === 0) return "";
  const top = Math.max(1, ...values);
  const step = values.length > 1 ? width / (values.length - 1) : 0;
  return values
    .map((v, i) => `${(i * step).toFixed(1)},${(height - 2 - (v / top) * (height - 4)).toFixed(1)}`)
    .join(" ");
}

export function Trend({ siteId, refresh = 0 }: { siteId: number; refresh?: number }) {
  const [days, setDays] = useState<Days | null>(null);
  const [failed, setFailed] = useState(false);

  useEffect(() => {
    let alive = true;
    reports.timeseries(siteId, { range: "7d", compare: false, imported: true, filters: {} }).then(
      (series) => {
        if (!alive) return;
        setDays({ dates: series.points.map((p) => p.time), visitors: series.points.map((p) => p.visitors) });
        setFailed(false);
      },
      (failure) => {
        if (alive && !(failure instanceof ApiError && failure.status === 401)) setFailed(true);
      },
    );
    return () => {
      alive = false;
    };
  }, [siteId, refresh]);

  if (failed && !days) return <span class="trend-missing">Figures unavailable</span>;
  if (!days) return <span class="trend-missing">…</span>;
  const today = days.visitors[days.visitors.length - 1] ?? 0;
  const described = days.dates
    .map((date, i) => `${day.format(new Date(`${date}T12:00:00Z`))} ${count(days.visitors[i])}`)
    .join(", ");
  return (
    <span class="trend">
      <span class="trend-today">
        <strong>{count(today)}</strong> {today === 1 ? "visitor" : "visitors"} today
      </span>
      <svg
        class="sparkline"
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        width={WIDTH}
        height={HEIGHT}
        role="img"
        aria-label={`Visitors of the last 7 days: ${described}`}
      >
        <polyline points={sparkPoints(days.visitors)} fill="none" stroke="currentColor" stroke-width="2" stroke-linejoin="round" stroke-linecap="round" />
      </svg>
    </span>
  );
}
