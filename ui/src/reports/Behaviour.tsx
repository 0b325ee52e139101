// The dashboard's panels of what the SDK captures by itself (docs/reports.md, "Autocapture"):
// 404 pages and where their visitors came from, outbound links and downloads, time on page and
// scroll depth, click heatmaps (a page opens its heatmap), rage and dead clicks, web vitals. Each
// table is a breakdown like the others (details, CSV, filters).
import { useEffect, useState } from "preact/hooks";

import { messageOf } from "../api";
import { count } from "../format";
import { queryParams, reports, type FilterName, type Figures, type ReportQuery, type Row, type WebVitals } from "./api";
import { BreakdownPanel, ratingText, vitalText, type Drill } from "./Breakdown";

interface Props {
  siteId: number;
  query: ReportQuery;
  onFilter: (name: FilterName, value: string) => void;
  totals?: Figures;
  tick: number;
  /** A shared dashboard: no links into the console's settings. */
  shared?: boolean;
}

const CLICKS = [
  { key: "visitors" as const, label: "Visitors" },
  { key: "events" as const, label: "Clicks" },
];

const HEAT = [
  { key: "visitors" as const, label: "Visitors" },
  { key: "clicks" as const, label: "Clicks" },
];

// A burst is one heatmap event: several fast clicks on one spot (rage), or clicks that changed nothing (dead).
const FRUSTRATED = [
  { key: "visitors" as const, label: "Visitors" },
  { key: "events" as const, label: "Bursts" },
  { key: "clicks" as const, label: "Clicks" },
];

const REFERRERS: Drill = {
  dimension: "not_found_referrers",
  heading: "Came from",
  title: (path) => `Where visitors of ${path} came from`,
  columns: [
    { key: "visitors", label: "Visitors" },
    { key: "events", label: "Hits" },
  ],
  back: "All 404 pages",
};

const VITALS: Record<string, string> = {
  LCP: "Largest contentful paint",
  INP: "Interaction to next paint",
  CLS: "Cumulative layout shift",
  FCP: "First contentful paint",
  TTFB: "Time to first byte",
};

/** The address of a page's click heatmap, with the dashboard's period and filters. */
export function heatmapHref(siteId: number, query: ReportQuery, path: string): string {
  const params = queryParams({ ...query, compare: false });
  params.set("path", path);
  return `/sites/${siteId}/heatmap?${params}`;
}

export function BehaviourPanels({ siteId, query, onFilter, totals, tick, shared }: Props) {
  const settings = shared ? "" : ` Turn it on in the site's settings (Autocapture).`;
  // A rage or dead click opens its page's heatmap, where the element is (not on a shared dashboard).
  const frustrated = shared
    ? {}
    : { link: (row: Row) => heatmapHref(siteId, query, row.page ?? "/"), linkTitle: "Show on the heatmap:" };
  const common = { siteId, query, onFilter, totals, tick };
  return (
    <>
      <BreakdownPanel
        {...common}
        title="Not found pages"
        empty={`No 404 pages in this period. Mark your not-found page with data-analytics-404 to see which paths visitors miss and where they came from.`}
        tabs={[
          {
            dimension: "not_found",
            label: "404 pages",
            filter: "page",
            drill: REFERRERS,
            columns: [
              { key: "visits", label: "Visits" },
              { key: "events", label: "Hits" },
            ],
          },
        ]}
      />
      <BreakdownPanel
        {...common}
        title="Outbound links and downloads"
        empty={`No clicks on outbound links or file downloads in this period.${settings}`}
        tabs={[
          { dimension: "outbound_links", label: "Outbound links", columns: CLICKS },
          { dimension: "file_downloads", label: "File downloads", columns: CLICKS },
        ]}
      />
      <BreakdownPanel
        {...common}
        totals={undefined}
        title="Engagement"
        empty={`No time on page measured in this period.${settings}`}
        tabs={[
          {
            dimension: "engagement",
            label: "Pages",
            filter: "page",
            columns: [
              { key: "visits", label: "Visits" },
              { key: "time_on_page", label: "Time on page" },
              { key: "scroll_depth", label: "Scroll depth" },
            ],
          },
        ]}
      />
      <BreakdownPanel
        {...common}
        title="Click heatmaps"
        empty={`No clicks recorded for heatmaps in this period.${settings}`}
        tabs={[
          {
            dimension: "heatmap_pages",
            label: "Pages",
            columns: HEAT,
            // A shared dashboard has no session for the recordings the heatmap is drawn on.
            link: shared ? undefined : (row) => heatmapHref(siteId, query, row.value),
            linkTitle: "Show the heatmap of",
          },
        ]}
      />
      <BreakdownPanel
        {...common}
        totals={undefined}
        title="Frustrated clicks"
        empty={`No rage or dead clicks in this period.${shared ? "" : " Heatmaps find them: turn them on in the site's settings (Autocapture)."}`}
        tabs={[
          { dimension: "rage_clicks", label: "Rage clicks", columns: FRUSTRATED, ...frustrated },
          { dimension: "dead_clicks", label: "Dead clicks", columns: FRUSTRATED, ...frustrated },
        ]}
      />
      <BreakdownPanel
        {...common}
        totals={undefined}
        title="Web vitals"
        empty={`No web vitals measured in this period.${settings}`}
        before={<VitalsSummary siteId={siteId} query={query} tick={tick} />}
        tabs={[
          {
            dimension: "web_vitals",
            label: "Pages (p75)",
            filter: "page",
            columns: [
              { key: "lcp", label: "LCP" },
              { key: "inp", label: "INP" },
              { key: "cls", label: "CLS" },
            ],
          },
        ]}
      />
    </>
  );
}

const share = new Intl.NumberFormat(undefined, { style: "percent", maximumFractionDigits: 0 });

/** The period's p75 of each web vital, its rating, and how its measurements split. */
function VitalsSummary({ siteId, query, tick }: { siteId: number; query: ReportQuery; tick: number }) {
  const [data, setData] = useState<WebVitals | null>(null);
  const [error, setError] = useState<string | null>(null);
  const key = JSON.stringify(query);
  useEffect(() => {
    let alive = true;
    reports.webVitals(siteId, query).then(
      (result) => {
        if (!alive) return;
        setData(result);
        setError(null);
      },
      (failure) => alive && setError(messageOf(failure)),
    );
    return () => {
      alive = false;
    };
  }, [siteId, key, tick]);
  if (error) return <p class="report-error" role="alert">Web vitals could not be loaded: {error}</p>;
  if (!data || data.vitals.every((v) => v.samples === 0)) return null;
  return (
    <ul class="vitals" aria-label="Web vitals of the period (75th percentile)">
      {data.vitals.map((v) => (
        <li key={v.name} class="vital-card" data-vital={v.name}>
          <span class="vital-name">
            <abbr title={VITALS[v.name]}>{v.name}</abbr>
          </span>
          {v.p75 === null || v.rating === null ? (
            <span class="vital-value">–</span>
          ) : (
            <span class={`vital-value vital vital-${v.rating}`}>
              <span class="vital-mark" aria-hidden="true" />
              {vitalText(v.name, v.p75)}
              <span class="vital-rating">{ratingText(v.rating)}</span>
            </span>
          )}
          {v.samples > 0 && (
            <>
              <span class="vital-split" aria-hidden="true">
                <span class="vital-good" style={{ width: `${v.good * 100}%` }} />
                <span class="vital-needs-improvement" style={{ width: `${v.needs_improvement * 100}%` }} />
                <span class="vital-poor" style={{ width: `${v.poor * 100}%` }} />
              </span>
              <span class="vital-samples">
                {share.format(v.good)} good · {share.format(v.poor)} poor · {count(v.samples)} measured
              </span>
            </>
          )}
        </li>
      ))}
    </ul>
  );
}
