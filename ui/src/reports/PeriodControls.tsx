// The one period menu of the console (the dashboard and all sites at a glance): the common periods
// as buttons, the rest in a menu, a custom range's dates, the comparison where the page has one,
// and their keyboard shortcuts.
import { useEffect, useState } from "preact/hooks";

import type { RangeName } from "./api";
import { RANGES, type Range, typing } from "./ranges";

/** The key that turns the comparison on or off. */
const COMPARE_KEY = "x";

/** What the menu reads and changes of a page's query: the period and, where shown, the comparison. */
export interface PeriodQuery {
  range: RangeName;
  from?: string;
  to?: string;
  compare?: boolean;
  comparison?: "previous" | "year";
}

/** Today's date (YYYY-MM-DD) in a time zone (the browser's without one), a custom range's default. */
export function todayIn(timezone?: string): string {
  try {
    return new Intl.DateTimeFormat("en-CA", { timeZone: timezone, year: "numeric", month: "2-digit", day: "2-digit" }).format(new Date());
  } catch {
    return new Date().toISOString().slice(0, 10);
  }
}

/**
 * The period menu. `ranges` are the periods the page offers (every one by default; a page without
 * realtime passes `SPAN_RANGES`); `comparable` shows the comparison (not for realtime, which
 * compares with nothing). The page keeps the query (in its address) and gets each change.
 */
export function Controls<Q extends PeriodQuery>({
  query,
  onChange,
  timezone,
  ranges = RANGES,
  comparable = true,
}: {
  query: Q;
  onChange: (q: Q) => void;
  timezone?: string;
  ranges?: readonly Range[];
  comparable?: boolean;
}) {
  const today = todayIn(timezone);
  const [from, setFrom] = useState(query.from ?? today);
  const [to, setTo] = useState(query.to ?? today);
  const choose = (name: RangeName) =>
    onChange({ ...query, range: name, from: name === "custom" ? from : undefined, to: name === "custom" ? to : undefined });
  const compares = comparable && query.range !== "realtime";
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (typing(event)) return;
      const key = event.key.toLowerCase();
      if (key === COMPARE_KEY && compares) {
        onChange({ ...query, compare: !query.compare });
        return;
      }
      const range = ranges.find((r) => r.key === key);
      if (range && range.name !== query.range) choose(range.name);
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  });
  const inMenu = !ranges.find((r) => r.name === query.range)?.button;
  const comparison = !query.compare ? "off" : query.comparison === "year" ? "year" : "previous";
  return (
    <div class="report-controls">
      <div class="segmented" role="group" aria-label="Date range">
        {ranges
          .filter((r) => r.button)
          .map((r) => (
            <button
              key={r.name}
              type="button"
              aria-pressed={query.range === r.name}
              aria-keyshortcuts={r.key.toUpperCase()}
              title={`${r.label} (key ${r.key.toUpperCase()})`}
              onClick={() => choose(r.name)}
            >
              {r.label}
            </button>
          ))}
      </div>
      <label class="report-select">
        <span class="visually-hidden">More periods</span>
        <select class={inMenu ? "is-chosen" : undefined} value={inMenu ? query.range : ""} onChange={(e) => e.currentTarget.value && choose(e.currentTarget.value as RangeName)}>
          <option value="">More periods…</option>
          {ranges
            .filter((r) => !r.button)
            .map((r) => (
              <option key={r.name} value={r.name}>
                {r.label} ({r.key.toUpperCase()})
              </option>
            ))}
        </select>
      </label>
      {query.range === "custom" && (
        <form
          class="report-dates"
          onSubmit={(e) => {
            e.preventDefault();
            onChange({ ...query, range: "custom", from, to });
          }}
        >
          <label>
            From <input type="date" value={from} max={to} required onInput={(e) => setFrom(e.currentTarget.value)} />
          </label>
          <label>
            To <input type="date" value={to} min={from} required onInput={(e) => setTo(e.currentTarget.value)} />
          </label>
          <button type="submit" class="button">
            Apply
          </button>
        </form>
      )}
      {compares && (
        <label class="report-select report-compare">
          <span>Compare with</span>
          <select
            value={comparison}
            aria-keyshortcuts={COMPARE_KEY.toUpperCase()}
            onChange={(e) => {
              const value = e.currentTarget.value;
              onChange({ ...query, compare: value !== "off", comparison: value === "year" ? "year" : "previous" });
            }}
          >
            <option value="previous">the previous period</option>
            <option value="year">the same period last year</option>
            <option value="off">nothing</option>
          </select>
        </label>
      )}
    </div>
  );
}
