// Every site at a glance: each site's visitors, pageviews, change and a small graph over one period
// (GET /api/overview), sortable by each column; a site's name opens its dashboard over that period.
import { useLocation } from "preact-iso/router";
import { useEffect, useState } from "preact/hooks";

import { ApiError, messageOf, request } from "../api";
import { Breakable } from "../components/Breakable";
import { Notice } from "../components/Notice";
import { Page } from "../components/Page";
import { sparkPoints } from "../components/Trend";
import { count } from "../format";
import { RANGE_NAMES, type RangeName } from "../reports/api";
import { changeText } from "../reports/figures";
import { Controls } from "../reports/PeriodControls";
import { SPAN_RANGES } from "../reports/ranges";

export interface OverviewSite {
  site_id: number;
  name: string;
  domain: string;
  timezone: string;
  from: string;
  to: string;
  interval: "hour" | "day";
  visitors: number;
  pageviews: number;
  previous_visitors: number;
  change: number | null;
  series: { date: string; visitors: number }[];
}

export interface Period {
  range: RangeName;
  from?: string;
  to?: string;
}

export function overviewParams(period: Period): URLSearchParams {
  const params = new URLSearchParams({ range: period.range });
  if (period.range === "custom" && period.from && period.to) {
    params.set("from", period.from);
    params.set("to", period.to);
  }
  return params;
}

export const overview = (period: Period) =>
  request<{ range: RangeName; sites: OverviewSite[] }>("GET", `/api/overview?${overviewParams(period)}`);

type Column = "name" | "visitors" | "pageviews" | "change";
const COLUMNS: { key: Column; label: string }[] = [
  { key: "name", label: "Site" },
  { key: "visitors", label: "Visitors" },
  { key: "pageviews", label: "Pageviews" },
  { key: "change", label: "Trend" },
];

function periodOf(search: Record<string, string>): Period {
  const range = (RANGE_NAMES as readonly string[]).includes(search.range ?? "") ? (search.range as RangeName) : "7d";
  return range === "custom" ? { range, from: search.from, to: search.to } : { range };
}

function sorted(sites: OverviewSite[], column: Column, descending: boolean): OverviewSite[] {
  const value = (s: OverviewSite) => (column === "name" ? s.name.toLowerCase() : column === "change" ? (s.change ?? -Infinity) : s[column]);
  return [...sites].sort((a, b) => {
    const x = value(a);
    const y = value(b);
    const order = x < y ? -1 : x > y ? 1 : a.site_id - b.site_id;
    return descending ? -order : order;
  });
}

/** The change as words and an arrow: "+12%" up in green, "−5%" down in red; none without a previous period. */
export function Change({ site }: { site: OverviewSite }) {
  if (site.change === null) {
    return <span class="overview-change">{site.visitors ? "new" : "–"}<span class="visually-hidden">{site.visitors ? ": no visitors in the previous period" : ": no visitors in either period"}</span></span>;
  }
  const kind = site.change > 0 ? "up" : site.change < 0 ? "down" : "same";
  const arrow = kind === "up" ? "↑" : kind === "down" ? "↓" : "→";
  const words = kind === "up" ? "up" : kind === "down" ? "down" : "unchanged";
  return (
    <span class={`overview-change ${kind}`}>
      <span aria-hidden="true">{arrow} </span>
      <span aria-hidden="true">{changeText(site.change)}</span>
      <span class="visually-hidden">
        {kind === "same" ? "unchanged" : `${words} ${changeText(Math.abs(site.change)).slice(1)}`} from {count(site.previous_visitors)} visitors in the previous period
      </span>
    </span>
  );
}

function Spark({ site }: { site: OverviewSite }) {
  const values = site.series.map((p) => p.visitors);
  const unit = site.interval === "hour" ? "hour" : "day";
  const most = Math.max(0, ...values);
  return (
    <svg class="sparkline" viewBox="0 0 96 28" width={96} height={28} role="img" aria-label={`Visitors per ${unit}: at most ${count(most)} in one ${unit}, ${values.length} ${unit}s`}>
      <polyline points={sparkPoints(values)} fill="none" stroke="currentColor" stroke-width="2" stroke-linejoin="round" stroke-linecap="round" />
    </svg>
  );
}

export function OverviewPage() {
  const { query, path, route } = useLocation();
  const period = periodOf(query);
  const key = overviewParams(period).toString();
  const [sites, setSites] = useState<OverviewSite[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [column, setColumn] = useState<Column>("visitors");
  const [descending, setDescending] = useState(true);

  useEffect(() => {
    let alive = true;
    setError(null);
    overview(period).then(
      (body) => alive && setSites(body.sites),
      (failure) => {
        if (!alive || (failure instanceof ApiError && failure.status === 401)) return;
        setError(`The figures could not be loaded: ${messageOf(failure)} Reload the page to try again.`);
      },
    );
    return () => {
      alive = false;
    };
  }, [key]);

  const sortBy = (next: Column) => {
    if (next === column) setDescending(!descending);
    else {
      setColumn(next);
      setDescending(next !== "name");
    }
  };
  const dashboard = (site: OverviewSite) => `/sites/${site.site_id}/reports?${overviewParams(period)}`;

  return (
    <Page title="All sites" subtitle={<>Every site you can see, over one period, each in its own time zone. <a href="/sites">Manage sites</a></>}>
      {/* The dashboard's own menu, without realtime; each site's trend is against its previous period. */}
      <Controls query={period} ranges={SPAN_RANGES} comparable={false} onChange={(next) => route(`${path}?${overviewParams(next)}`)} />
      {error && <Notice kind="error">{error}</Notice>}
      {!sites && !error && <p class="loading">Loading figures…</p>}
      {sites && sites.length === 0 && (
        <div class="panel empty">
          <h2>No sites to show</h2>
          <p>There are no sites you can see yet. Add a site on the <a href="/sites">Sites</a> page, or ask the owner to give you one.</p>
        </div>
      )}
      {sites && sites.length > 0 && (
        <div class="panel table-scroll overview-panel">
          <table class="overview-table card-table">
            <caption class="visually-hidden">Visitors, pageviews and change of every site, sorted by {COLUMNS.find((c) => c.key === column)?.label.toLowerCase()}</caption>
            <thead>
              <tr>
                {COLUMNS.map((c) => (
                  <th key={c.key} scope="col" class={c.key === "name" ? undefined : "num"} aria-sort={column === c.key ? (descending ? "descending" : "ascending") : "none"}>
                    <button type="button" class="overview-sort" onClick={() => sortBy(c.key)}>
                      {c.label}
                      <span aria-hidden="true">{column === c.key ? (descending ? " ▼" : " ▲") : ""}</span>
                    </button>
                  </th>
                ))}
                <th scope="col" class="overview-graph">Graph</th>
              </tr>
            </thead>
            <tbody>
              {sorted(sites, column, descending).map((site) => (
                <tr key={site.site_id} data-site-id={site.site_id}>
                  <th scope="row">
                    <a href={dashboard(site)}>{site.name}</a>
                    <span class="overview-domain">
                      <Breakable text={site.domain} />
                    </span>
                  </th>
                  <td class="num" data-label="Visitors">{count(site.visitors)}</td>
                  <td class="num" data-label="Pageviews">{count(site.pageviews)}</td>
                  <td class="num" data-label="Trend">
                    <Change site={site} />
                  </td>
                  <td class="overview-graph" data-label="Graph">
                    <Spark site={site} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Page>
  );
}
