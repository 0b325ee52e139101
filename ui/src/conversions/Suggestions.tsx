// What the step fields of funnels and journeys suggest as the owner types: the site's own pages
// and events of the period (the events table: the owner's events and the SDK's click captures,
// never its measurements), as native <datalist>s.
import { useEffect, useState } from "preact/hooks";

import { reports, type ReportQuery } from "../reports/api";
import { eventName } from "../reports/events";

export type StepKind = "page" | "event";

/** The id of the list a step field of this kind uses. */
export function suggestionsId(siteId: number, kind: StepKind): string {
  return `step-suggestions-${kind}-${siteId}`;
}

/** The site's pages and events of the period, as lists for the step fields. */
export function StepSuggestions({ siteId, query }: { siteId: number; query: ReportQuery }) {
  const [values, setValues] = useState<Record<StepKind, string[]>>({ page: [], event: [] });
  const key = JSON.stringify([query.range, query.from, query.to]);
  useEffect(() => {
    let live = true;
    const period: ReportQuery = { ...query, filters: {}, compare: false };
    void Promise.all([
      reports.breakdown(siteId, period, "page", undefined, { limit: 100 }),
      reports.breakdown(siteId, period, "event", undefined, { limit: 100 }),
    ]).then(
      ([pages, events]) => {
        if (live) setValues({ page: pages.rows.map((r) => r.value), event: events.rows.map((r) => r.value) });
      },
      () => undefined, // suggestions are a help: without them the fields still take any value
    );
    return () => {
      live = false;
    };
  }, [siteId, key]);
  return (
    <>
      {(["page", "event"] as const).map((kind) => (
        <datalist key={kind} id={suggestionsId(siteId, kind)}>
          {values[kind].map((value) => (
            <option key={value} value={value} label={kind === "event" ? eventName(value) : undefined} />
          ))}
        </datalist>
      ))}
    </>
  );
}
