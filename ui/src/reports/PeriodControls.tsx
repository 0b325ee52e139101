// The dashboard's period and comparison: the common periods as buttons, the rest in a menu, a
// custom range's dates, and their keyboard shortcuts.
import { useEffect, useState } from "preact/hooks";

import type { RangeName, ReportQuery } from "./api";
import { RANGES, typing } from "./ranges";

/** The key that turns the comparison on or off. */
const COMPARE_KEY = "x";

/** Today's date (YYYY-MM-DD) in the site's time zone, the default of a custom range. */
export function todayIn(timezone: string): string {
  try {
    return new Intl.DateTimeFormat("en-CA", { timeZone: timezone, year: "numeric", month: "2-digit", day: "2-digit" }).format(new Date());
  } catch {
    return new Date().toISOString().slice(0, 10);
  }
}

export function Controls({ query, onChange, timezone }: { query: ReportQuery; onChange: (q: ReportQuery) => void; timezone: string }) {
  const today = todayIn(timezone);
  const [from, setFrom] = useState(query.from ?? today);
  const [to, setTo] = useState(query.to ?? today);
  const choose = (name: RangeName) =>
    onChange({ ...query, range: name, from: name === "custom" ? from : undefined, to: name === "custom" ? to : undefined });
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (typing(event)) return;
      const key = event.key.toLowerCase();
      if (key === COMPARE_KEY && query.range !== "realtime") {
        onChange({ ...query, compare: !query.compare });
        return;
      }
      const range = RANGES.find((r) => r.key === key);
      if (range && range.name !== query.range) choose(range.name);
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  });
  const inMenu = !RANGES.find((r) => r.name === query.range)?.button;
  const comparison = !query.compare ? "off" : query.comparison === "year" ? "year" : "previous";
  return (
    <div class="report-controls">
      <div class="segmented" role="group" aria-label="Date range">
        {RANGES.filter((r) => r.button).map((r) => (
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
          {RANGES.filter((r) => !r.button).map((r) => (
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
      {query.range !== "realtime" && (
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
