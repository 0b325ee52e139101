// Reports of one site: range and comparison, filters, summary figures, the chart, breakdowns, realtime.
import { useLocation, useRoute } from "preact-iso/router";
import { useCallback, useEffect, useMemo, useRef, useState } from "preact/hooks";

import { api, type Site } from "../api";
import { Breakable } from "../components/Breakable";
import { Notice } from "../components/Notice";
import { Trend } from "../components/Trend";
import { Page } from "../components/Page";
import { count } from "../format";
import { type Resource, useAutoRefresh, useResource } from "../hooks";
import { downloads, FILTER_NAMES, parseQuery, queryParams, reports, type FilterName, type ReportQuery, type Series, type Summary } from "./api";
import { goals as goalsApi } from "../goals/api";
import { useCanChange } from "../user";
import { BehaviourPanels } from "./Behaviour";
import { BreakdownPanel, CHANNEL_NAMES, type Tab } from "./Breakdown";
import { GoalsPanel } from "./GoalsPanel";
import { Controls } from "./PeriodControls";
import { Segments } from "./Segments";
import { FILTER_TABLES, PropSuggestions, ValueSuggestions } from "./ValueSuggestions";
import { FILTER_LABELS, PANELS } from "./dimensions.gen";
import { chipText } from "./filterText";
import { Annotations } from "./Annotations";
import { Chart } from "./Chart";
import { Freshness } from "./Freshness";
import { change, changeText, METRICS, metricOf, type Metric } from "./figures";

/** How often the open dashboard reloads its figures (realtime's last 30 minutes: more often). */
export const DASHBOARD_REFRESH_MS = 60_000;
export const REALTIME_REFRESH_MS = 10_000;

const VISIT_COLUMNS: Tab["columns"] = [
  { key: "visitors", label: "Visitors" },
  { key: "visits", label: "Visits" },
  { key: "bounce_rate", label: "Bounce rate" },
];
/** The columns of the tables that show other figures than a visit attribute's. */
const COLUMNS: Record<string, Tab["columns"]> = {
  page: [{ key: "visitors", label: "Visitors" }, { key: "pageviews", label: "Pageviews" }],
  entry_page: [{ key: "visits", label: "Entries" }, { key: "bounce_rate", label: "Bounce rate" }],
  exit_page: [{ key: "visits", label: "Exits" }],
  event: [{ key: "visitors", label: "Visitors" }, { key: "events", label: "Events" }],
};

/** A panel's tabs, as the registry of dimensions lists them (dimensions.gen.ts). */
function tabsOf(panel: string): Tab[] {
  return (PANELS[panel] ?? []).map((tab) => ({ ...tab, columns: COLUMNS[tab.dimension] ?? VISIT_COLUMNS }));
}

const OPERATORS: { prefix: string; label: string }[] = [
  { prefix: "", label: "is" },
  { prefix: "!", label: "is not" },
  { prefix: "~", label: "contains" },
];

export function ReportsPage() {
  const { params } = useRoute();
  return <SiteReports key={params.id} siteId={Number(params.id)} />;
}

/** A site as the reports need it: the API's record also carries the site's time zone. */
export type ReportSite = Pick<Site, "id" | "name" | "domain"> & { timezone: string };

async function findSite(id: number): Promise<ReportSite | null> {
  return ((await api.sites()) as (Site & ReportSite)[]).find((site) => site.id === id) ?? null;
}

interface SiteReportsProps {
  siteId: number;
  /** A shared dashboard: the site as the link describes it, and the link's own path. */
  shared?: { site: ReportSite; home: string };
}

/** The dashboard of one site; read-only and without links into the console when `shared`. */
export function SiteReports({ siteId, shared }: SiteReportsProps) {
  const location = useLocation();
  const query = useMemo(() => parseQuery(location.url.split("?")[1] ?? ""), [location.url]);
  const site = useResource(() => (shared ? Promise.resolve(shared.site) : findSite(siteId)));
  // A viewer reads the goals but may not change them: no link to manage them.
  const canChange = useCanChange();
  // A shared dashboard has no session for the goals API: goal filters then show the goal's id.
  const siteGoals = useResource(() => (shared ? Promise.resolve([]) : goalsApi.list(siteId)));
  const goalNames = useMemo(() => new Map((siteGoals.data ?? []).map((g) => [String(g.id), g.name])), [siteGoals.data]);
  const summary = useResource(() => reports.summary(siteId, query));
  const queryKey = JSON.stringify(query);
  const first = useRef(true);
  useEffect(() => {
    if (first.current) first.current = false;
    else void summary.reload();
  }, [queryKey]);
  const totals = summary.data?.current;
  // The figures refresh while the page is open (and when the tab becomes visible again).
  const [tick, setTick] = useState(0);
  const refresh = useCallback(async () => {
    setTick((t) => t + 1);
    await summary.reload();
  }, [summary.reload]);
  useAutoRefresh(refresh, query.range === "realtime" ? REALTIME_REFRESH_MS : DASHBOARD_REFRESH_MS);
  const setQuery = useCallback(
    (next: ReportQuery) => {
      const search = queryParams(next);
      if (!next.compare) search.set("compare", "false");
      else if (next.comparison !== "year") search.delete("compare");
      location.route(`${shared ? shared.home : `/sites/${siteId}/reports`}?${search}`, true);
    },
    [location, siteId, shared],
  );
  const setFilter = (name: FilterName, value: string) => setQuery({ ...query, filters: { ...query.filters, [name]: value } });
  const dropFilter = (name: FilterName) => {
    const filters = { ...query.filters };
    delete filters[name];
    setQuery({ ...query, filters });
  };

  if (site.data === null && !site.loading) {
    return (
      <Page title="Reports" back={{ href: "/reports", label: "Reports" }}>
        <Notice kind="error">{site.error ?? "No site with that id exists."}</Notice>
      </Page>
    );
  }
  const name = site.data?.name ?? "…";
  return (
    <Page
      title={shared ? name : `Reports: ${name}`}
      back={shared ? undefined : { href: `/sites/${siteId}`, label: name }}
      subtitle={site.data ? <TimezoneNote site={site.data} /> : undefined}
      actions={
        <>
          {!shared && (
            <a class="button button-quiet" href={`/sites/${siteId}/conversions?${queryParams(query)}`}>
              Funnels, retention, journeys
            </a>
          )}
          <RealtimeBadge siteId={siteId} />
        </>
      }
    >
      <Freshness />
      <Controls key={site.data?.timezone ?? ""} query={query} onChange={setQuery} timezone={site.data?.timezone ?? "UTC"} />
      <div class="report-filters" role="group" aria-label="Filters">
        {(Object.entries(query.filters) as [FilterName, string][]).map(([f, value]) => {
          const chip = chipText(f, value, goalNames);
          return (
            <span class="filter-chip" key={f}>
              <span>
                {FILTER_LABELS[f]} {chip.op} <strong>{chip.value}</strong>
              </span>
              <button type="button" class="icon-button" aria-label={`Remove the ${FILTER_LABELS[f].toLowerCase()} filter`} onClick={() => dropFilter(f)}>
                ×
              </button>
            </span>
          );
        })}
        <AddFilter siteId={siteId} query={query} goals={siteGoals.data ?? []} onAdd={setFilter} />
        {!shared && <Segments siteId={siteId} filters={query.filters} onApply={(filters) => setQuery({ ...query, filters })} />}
        {Object.keys(query.filters).length > 0 && (
          <button type="button" class="button button-quiet" onClick={() => setQuery({ ...query, filters: {} })}>
            Clear filters
          </button>
        )}
      </div>
      <Overview siteId={siteId} query={query} summary={summary} tick={tick} timezone={site.data?.timezone ?? "UTC"} onQuery={setQuery} manage={!shared} />
      <p class="report-downloads">
        Download as CSV: <a href={downloads.summary(siteId, query)} download>summary</a> ·{" "}
        <a href={downloads.timeseries(siteId, query)} download>
          time series
        </a>
        {!shared && (
          <>
            {" "}
            · <a href={downloads.events(siteId, query)} download>raw events of the period</a>
          </>
        )}
      </p>
      <div class="report-grid">
        <GoalsPanel siteId={siteId} query={query} onFilter={(goal) => setFilter("goal", goal)} manage={!shared && canChange} />
        <BreakdownPanel
          title="Pages"
          siteId={siteId}
          query={query}
          onFilter={setFilter}
          totals={totals}
          tick={tick}
          tabs={tabsOf("pages")}
        />
        <BreakdownPanel
          title="Sources"
          siteId={siteId}
          query={query}
          onFilter={setFilter}
          totals={totals}
          tick={tick}
          tabs={tabsOf("sources")}
        />
        <BreakdownPanel
          title="Devices"
          siteId={siteId}
          query={query}
          onFilter={setFilter}
          totals={totals}
          tick={tick}
          tabs={tabsOf("devices")}
        />
        <BreakdownPanel
          title="Locations"
          siteId={siteId}
          query={query}
          onFilter={setFilter}
          totals={totals}
          tick={tick}
          before={<LazyWorldMap siteId={siteId} query={query} tick={tick} onCountry={(code) => setFilter("country", code)} />}
          tabs={tabsOf("places")}
        />
        <BreakdownPanel
          title="Custom events"
          siteId={siteId}
          query={query}
          onFilter={setFilter}
          totals={totals}
          tick={tick}
          props
          tabs={tabsOf("events")}
        />
        <BehaviourPanels siteId={siteId} query={query} onFilter={setFilter} totals={totals} tick={tick} shared={!!shared} />
      </div>
    </Page>
  );
}

/** "Add a filter": a dimension, is / is not / contains, and a value (a goal from the site's goals). */
function AddFilter({ siteId, query, goals, onAdd }: { siteId: number; query: ReportQuery; goals: { id: number; name: string }[]; onAdd: (name: FilterName, value: string) => void }) {
  const [open, setOpen] = useState(false);
  const [name, setName] = useState<FilterName>("page");
  const [op, setOp] = useState("");
  const [value, setValue] = useState("");
  const [error, setError] = useState<string | null>(null);
  if (!open)
    return (
      <button type="button" class="button button-quiet" onClick={() => setOpen(true)}>
        Add a filter
      </button>
    );
  const noContains = name === "goal" || name === "prop";
  return (
    <form
      class="report-add-filter"
      aria-label="Add a filter"
      onSubmit={(e) => {
        e.preventDefault();
        const text = value.trim();
        if (!text) {
          setError("Give the filter a value.");
          return;
        }
        if (name === "prop" && !text.includes(":")) {
          setError("Write the prop as key:value, for example plan:pro.");
          return;
        }
        onAdd(name, (noContains && op === "~" ? "" : op) + text);
        setOpen(false);
        setValue("");
        setError(null);
      }}
    >
      <label>
        Filter
        <select value={name} onChange={(e) => { setName(e.currentTarget.value as FilterName); setValue(""); }}>
          {FILTER_NAMES.filter((n) => n !== "goal" || goals.length > 0).map((n) => (
            <option key={n} value={n}>
              {FILTER_LABELS[n]}
            </option>
          ))}
        </select>
      </label>
      <label>
        Operator
        <select value={op} onChange={(e) => { setOp(e.currentTarget.value); if (name === "channel") setValue(""); }}>
          {OPERATORS.filter((o) => !(noContains && o.prefix === "~")).map((o) => (
            <option key={o.prefix} value={o.prefix}>
              {o.label}
            </option>
          ))}
        </select>
      </label>
      {name === "goal" ? (
        <label>
          Goal
          <select value={value} onChange={(e) => setValue(e.currentTarget.value)}>
            <option value="">Choose a goal</option>
            {goals.map((g) => (
              <option key={g.id} value={String(g.id)}>
                {g.name}
              </option>
            ))}
          </select>
        </label>
      ) : name === "channel" && op !== "~" ? (
        <label>
          Channel
          <select value={value} onChange={(e) => setValue(e.currentTarget.value)}>
            <option value="">Choose a channel</option>
            {Object.entries(CHANNEL_NAMES).map(([key, text]) => (
              <option key={key} value={key}>
                {text}
              </option>
            ))}
          </select>
        </label>
      ) : (
        <label>
          Value
          <input
            type="text"
            value={value}
            maxLength={2000}
            placeholder={name.endsWith("page") ? "/pricing" : name === "prop" ? "plan:pro" : ""}
            list={FILTER_TABLES[name] || name === "prop" ? "filter-suggestions" : undefined}
            autoComplete="off"
            onInput={(e) => setValue(e.currentTarget.value)}
          />
          {FILTER_TABLES[name] && <ValueSuggestions key={name} id="filter-suggestions" siteId={siteId} table={FILTER_TABLES[name] ?? ""} text={value} query={query} />}
          {name === "prop" && <PropSuggestions id="filter-suggestions" siteId={siteId} text={value} query={query} />}
        </label>
      )}
      <button type="submit" class="button">
        Apply
      </button>
      <button type="button" class="button button-quiet" onClick={() => setOpen(false)}>
        Cancel
      </button>
      {error && <p class="field-error" role="alert">{error}</p>}
    </form>
  );
}

function TimezoneNote({ site }: { site: ReportSite }) {
  return (
    <span>
      {site.domain} · days and hours in <strong>{site.timezone}</strong>
    </span>
  );
}

interface OverviewProps {
  siteId: number;
  query: ReportQuery;
  summary: Resource<Summary>;
  tick: number;
  timezone: string;
  onQuery?: (query: ReportQuery) => void;
  /** Owners and admins may add notes to the graph here (not on a shared dashboard). */
  manage: boolean;
}

const LEFT_OUT: Record<string, string> = {
  turned_off: "Imported history is left out of these figures.",
  filters: "Imported history is left out while filters are set (an import holds no visits to filter).",
};

/** Says which figures include imported history, and turns it on or off for the whole page. */
function ImportedLine({ summary, series, query, onChange }: { summary: Summary | null; series: Series | null; query: ReportQuery; onChange?: (q: ReportQuery) => void }) {
  const note = summary?.imported;
  if (!note) return null;
  const shown = note.included || note.reason === "turned_off" || note.reason === "filters";
  if (!shown) return null;
  const hourly = note.included && series?.imported?.reason === "hourly";
  return (
    <div class="report-note report-imported">
      <span>
        {note.included
          ? "These figures include imported history (added day by day; imported visitors are counted per day)."
          : LEFT_OUT[note.reason ?? ""]}
        {hourly && " The hour-by-hour chart shows collected figures only: imports are daily."}
      </span>
      {onChange && (
        <label class="checkbox-row">
          <input type="checkbox" checked={query.imported} onChange={(e) => onChange({ ...query, imported: e.currentTarget.checked })} />
          Include imported history
        </label>
      )}
    </div>
  );
}

function Overview({ siteId, query, summary, tick, timezone, onQuery, manage }: OverviewProps) {
  const key = JSON.stringify(query);
  const series = useResource(() => reports.timeseries(siteId, query));
  const [metric, setMetric] = useState<Metric>("visitors");
  const first = useRef(true);
  useEffect(() => {
    if (first.current) first.current = false;
    else void series.reload();
  }, [key, tick]);
  const chosen = metricOf(metric);
  const current = summary.data?.current;
  const previous = summary.data?.previous ?? undefined;
  // Comparing with a period that had no visits shows nothing: say so instead.
  const nothingBefore = query.compare && previous !== undefined && previous.visits === 0 && previous.pageviews === 0;
  return (
    <>
      {(summary.error || series.error) && <Notice kind="error">{summary.error ?? series.error}</Notice>}
      <section class="panel report-overview" aria-label="Summary">
        <div class="report-cards" role="group" aria-label="Figure shown in the chart">
          {METRICS.map((m) => {
            const delta = current && previous ? change(current[m.key], previous[m.key]) : null;
            const good = delta !== null && (m.lowerIsBetter ? delta < 0 : delta > 0);
            return (
              <button key={m.key} type="button" class="report-card" aria-pressed={metric === m.key} data-metric={m.key} onClick={() => setMetric(m.key)}>
                <span class="report-card-label">{m.label}</span>
                <span class="report-card-value">{current ? m.format(current[m.key]) : "–"}</span>
                {delta !== null && (
                  <span class={`report-card-change ${delta === 0 ? "" : good ? "up" : "down"}`}>
                    {changeText(delta)}
                    <span class="visually-hidden"> compared with the previous period</span>
                  </span>
                )}
              </button>
            );
          })}
        </div>
        {series.data && (
          <>
            <Chart
              points={series.data.points}
              previous={nothingBefore ? null : series.data.previous}
              metric={metric}
              label={chosen.label}
              interval={series.data.interval}
              timezone={timezone}
              format={chosen.format}
              notes={series.data.annotations}
            />
            <Annotations
              siteId={siteId}
              notes={series.data.annotations ?? []}
              lastDay={series.data.range.to}
              manage={manage}
              onChanged={() => void series.reload()}
            />
            <table class="visually-hidden">
              <caption>
                {chosen.label} per {series.data.interval}
              </caption>
              <tbody>
                {series.data.points.map((p) => (
                  <tr key={p.time}>
                    <th scope="row">{p.time}</th>
                    <td>{chosen.format(p[metric])}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        )}
        {series.loading && !series.data && <p class="loading">Loading the chart…</p>}
        <ImportedLine summary={summary.data} series={series.data} query={query} onChange={onQuery} />
        {nothingBefore && summary.data?.previous_range && (
          <p class="report-note">
            Nothing to compare with: no visits from {summary.data.previous_range.from} to {summary.data.previous_range.to}.
          </p>
        )}
      </section>
    </>
  );
}

function RealtimeBadge({ siteId }: { siteId: number }) {
  const live = useResource(() => reports.realtime(siteId));
  useAutoRefresh(live.reload, 10_000);
  const visitors = live.data?.visitors;
  return (
    <span role="status" aria-live="polite">
      <a class="badge badge-large realtime" href={`/sites/${siteId}/realtime`} title="Open the realtime view">
        <span class="badge-dot realtime-dot" aria-hidden="true" />
        {visitors === undefined ? "…" : `${count(visitors)} ${visitors === 1 ? "visitor" : "visitors"} in the last 5 minutes`}
      </a>
    </span>
  );
}

export function ReportsIndex() {
  const sites = useResource(api.sites);
  return (
    <Page title="Reports" subtitle="Pick a site to see its visitors, pages, sources and events.">
      {sites.error && <Notice kind="error">{sites.error}</Notice>}
      {sites.data && sites.data.length === 0 && (
        <div class="panel empty">
          <h2>No sites yet</h2>
          <p>
            <a href="/sites">Add a site</a> to start collecting data for its reports.
          </p>
        </div>
      )}
      {sites.data && sites.data.length > 0 && (
        <ul class="site-list" aria-label="Reports of your sites">
          {sites.data.map((site) => (
            <li class="site-row report-site" key={site.id}>
              <div class="site-ident">
                <a class="site-name" href={`/sites/${site.id}/reports`}>
                  {site.name}
                </a>
                <span class="site-domain"><Breakable text={site.domain} /></span>
              </div>
              <div class="site-trend">
                <Trend siteId={site.id} />
              </div>
            </li>
          ))}
        </ul>
      )}
    </Page>
  );
}

type MapProps = { siteId: number; query: ReportQuery; tick: number; onCountry?: (code: string) => void };

/** The world map, loaded as its own chunk the first time the Locations panel shows. */
function LazyWorldMap(props: MapProps) {
  const [Map, setMap] = useState<((p: MapProps) => unknown) | null>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    import("./WorldMap").then(
      (m) => setMap(() => m.default),
      () => setFailed(true),
    );
  }, []);
  if (failed) return <p class="report-error" role="alert">The map could not be loaded. Reload the page to try again.</p>;
  if (!Map) return <p class="loading">Loading the map…</p>;
  const Loaded = Map as (p: MapProps) => preact.JSX.Element;
  return <Loaded {...props} />;
}
