// One breakdown panel: tabs over related dimensions, a table of the top rows, click a row to filter.
import type { ComponentChildren } from "preact";
import { eventName } from "./events";
import { countryName, languageName } from "./places";
import { useEffect, useState } from "preact/hooks";

import { messageOf } from "../api";
import { Breakable } from "../components/Breakable";
import { count } from "../format";
import { downloads, reports, type Breakdown as BreakdownData, type FilterName, type Figures, type ReportQuery, type Row } from "./api";
import { BreakdownDetails } from "./BreakdownDetails";
import { duration } from "./figures";

export interface Tab {
  dimension: string;
  label: string;
  /** The filter a click on a row sets, if any. */
  filter?: FilterName;
  columns: { key: keyof Row; label: string }[];
  /** A click on a row shows this table of the row's value instead (a "Filter" button then filters). */
  drill?: Drill;
  /** A row's value opens this page (a full page load: the heatmap's address has its own CSP). */
  link?: (row: Row) => string;
  /** What the link does, for its title ("Show the heatmap of"). */
  linkTitle?: string;
}

/** A table of one row's value: the props of a custom event, the referrers of a 404 path. */
export interface Drill {
  dimension: string;
  /** The heading of its value column, and its title ("Props of signup"). */
  heading: string;
  title: (value: string) => string;
  columns: { key: keyof Row; label: string }[];
  /** The button back to the tab's own rows. */
  back: string;
}

const PROPS: Drill = {
  dimension: "prop",
  heading: "Prop",
  title: (value) => `Props of ${value}`,
  columns: [
    { key: "visitors", label: "Visitors" },
    { key: "events", label: "Events" },
  ],
  back: "All events",
};

interface Props {
  title: string;
  tabs: Tab[];
  siteId: number;
  query: ReportQuery;
  onFilter: (name: FilterName, value: string) => void;
  /** Custom events: a click shows the event's props instead of filtering at once. */
  props?: boolean;
  /** The period's figures, of which each row's share is shown. */
  totals?: Figures;
  /** Changes when the dashboard refreshes its figures. */
  tick?: number;
  /** Shown above the table (the Locations panel's map). */
  before?: ComponentChildren;
  /** What an empty table says (default: no data for this period). */
  empty?: string;
}

type Column = { key: keyof Row; label: string };

/** The figure each table is ranked by (the reports API's order, docs/reports.md); other tables: visits. */
const RANKED_BY: Record<string, keyof Row> = {
  page: "pageviews",
  event: "events",
  prop: "events",
  goal: "visitors",
  not_found: "events",
  not_found_referrers: "events",
  outbound_links: "events",
  file_downloads: "events",
  rage_clicks: "events",
  dead_clicks: "events",
  heatmap_pages: "clicks",
  clicked_elements: "clicks",
};

/** The figure a row's bar and percentage show: the one the table is ranked by, so a longer bar
 * never sits below a shorter one; else visitors or visits where the rows have them. */
export function shareKey(columns: Column[], dimension?: string): keyof Row {
  const keys = columns.map((c) => c.key);
  const ranked = dimension ? (RANKED_BY[dimension] ?? "visits") : undefined;
  if (ranked && keys.includes(ranked)) return ranked;
  return keys.includes("visitors") ? "visitors" : keys.includes("visits") ? "visits" : keys[0];
}

/** Each row's share (0..1) of the period's total, and its bar's length relative to the largest row. */
export function shares(rows: Row[], key: keyof Row, totals?: Figures): { share: number | null; bar: number }[] {
  const value = (row: Row) => (typeof row[key] === "number" ? (row[key] as number) : 0);
  const largest = Math.max(0, ...rows.map(value));
  const total = totals && typeof totals[key as keyof Figures] === "number" ? totals[key as keyof Figures] : 0;
  return rows.map((row) => ({
    share: total > 0 ? Math.min(1, value(row) / total) : null,
    bar: largest > 0 ? value(row) / largest : 0,
  }));
}

const percent = new Intl.NumberFormat(undefined, { style: "percent", maximumFractionDigits: 1 });
const wholePercent = new Intl.NumberFormat(undefined, { style: "percent", maximumFractionDigits: 0 });

function cell(key: keyof Row, row: Row): ComponentChildren {
  const value = row[key];
  if (key === "lcp" || key === "inp" || key === "cls") return vital(key, row);
  if (typeof value !== "number") return String(value ?? "");
  if (key === "bounce_rate") return percent.format(value);
  if (key === "visit_duration" || key === "time_on_page") return duration(value);
  if (key === "scroll_depth") return `${value}%`;
  return count(value);
}

/** A web vital's p75 with its rating as a coloured mark and in words for screen readers. */
function vital(key: "lcp" | "inp" | "cls", row: Row): ComponentChildren {
  const value = row[key];
  const rating = row[`${key}_rating`];
  if (value === null || value === undefined || !rating) return <span title="Not measured">–</span>;
  return (
    <span class={`vital vital-${rating}`}>
      <span class="vital-mark" aria-hidden="true" />
      {vitalText(key, value)}
      <span class="visually-hidden"> ({ratingText(rating)})</span>
    </span>
  );
}

export function vitalText(key: string, value: number): string {
  if (key.toLowerCase() === "cls") return value.toFixed(2);
  return value >= 1000 ? `${(value / 1000).toFixed(1)} s` : `${Math.round(value)} ms`;
}

export function ratingText(rating: string): string {
  return rating === "good" ? "good" : rating === "poor" ? "poor" : "needs improvement";
}

/** The channels' names (the API's values and names: src/sightline/channels.py, CHANNELS; a test compares them). */
export const CHANNEL_NAMES: Record<string, string> = {
  direct: "Direct",
  organic_search: "Organic search",
  paid_search: "Paid search",
  organic_social: "Organic social",
  paid_social: "Paid social",
  email: "E-mail",
  referral: "Referral",
  ai_assistants: "AI assistants",
};

export function label(dimension: string, value: string): string {
  if (value === "(none)") return dimension === "source" ? "Direct / none" : "Unknown";
  if (dimension === "channel") return CHANNEL_NAMES[value] ?? value;
  if (dimension === "country") return countryName(value);
  if (dimension === "language") return languageName(value);
  if (dimension === "event") return eventName(value);
  return value;
}

/** The rows of one request, with what was asked (site, query, table, refresh) and the table alone. */
interface Answer {
  asked: string;
  table: string;
  data: BreakdownData;
}

export function BreakdownPanel({ title, tabs, siteId, query, onFilter, props, totals, tick, before, empty }: Props) {
  const [details, setDetails] = useState(false);
  const [tab, setTab] = useState(0);
  const [answer, setAnswer] = useState<Answer | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [event, setEvent] = useState<string | null>(null);
  const current = tabs[tab];
  const drill = current.drill ?? (props ? PROPS : undefined);
  // The table shown: the tab's own, or the drill table of the row `event` names.
  const dimension = event && drill ? drill.dimension : current.dimension;
  const caption = event && drill ? drill.title(event) : `${title}: ${current.label}`;
  const key = JSON.stringify(query);
  const table = JSON.stringify([dimension, event]);
  const asked = JSON.stringify([siteId, key, table, tick]);
  // A new filter or period keeps the rows on screen until the new ones come; another table (a tab,
  // a drill) never shows the rows of the one before. The panel is busy until its answer is in.
  const data = answer?.table === table ? answer.data : null;
  const busy = answer?.asked !== asked && !error;

  useEffect(() => {
    let alive = true;
    setError(null);
    reports.breakdown(siteId, query, dimension, event ?? undefined).then(
      (result) => alive && setAnswer({ asked, table, data: result }),
      (failure) => alive && setError(messageOf(failure)),
    );
    return () => {
      alive = false;
    };
  }, [asked]);

  const columns = event && drill ? drill.columns : current.columns;
  const id = `breakdown-${current.dimension}`;
  return (
    <section class="panel report-panel" aria-labelledby={`${id}-title`} aria-busy={busy ? "true" : undefined}>
      <div class="report-panel-head">
        <h2 id={`${id}-title`}>{event ? `${title}: ${event}` : title}</h2>
        {tabs.length > 1 && !event && (
          <div class="segmented" role="group" aria-label={`${title}: what to show`}>
            {tabs.map((t, i) => (
              <button key={t.dimension} type="button" aria-pressed={i === tab} onClick={() => setTab(i)}>
                {tabLabel(t.label)}
              </button>
            ))}
          </div>
        )}
        {event && (
          <button type="button" class="button button-quiet" onClick={() => setEvent(null)}>
            {drill?.back}
          </button>
        )}
      </div>
      {!event && before}
      {error && <p class="report-error" role="alert">{error}</p>}
      {data && data.rows.length === 0 && <p class="report-empty">{event ? "No data for this period." : (empty ?? "No data for this period.")}</p>}
      {data && data.rows.length > 0 && (
        <BreakdownTable
          rows={data.rows}
          columns={columns}
          dimension={dimension}
          caption={caption}
          heading={event && drill ? drill.heading : current.label}
          totals={totals}
          event={event}
          filter={current.filter}
          drill={!!drill}
          link={event ? undefined : current.link}
          linkTitle={current.linkTitle}
          onFilter={onFilter}
          onEvent={setEvent}
        />
      )}
      {data && data.rows.length > 0 && (
        <div class="report-more">
          <button
            type="button"
            class="button button-quiet"
            aria-label={`Details: all ${event && drill ? drill.title(event).toLowerCase() : current.label.toLowerCase()}`}
            onClick={() => setDetails(true)}
          >
            Details
          </button>
          <a
            class="button button-quiet"
            href={downloads.breakdown(siteId, query, dimension, event ?? undefined)}
            download
          >
            CSV<span class="visually-hidden">: download {event && drill ? drill.title(event).toLowerCase() : current.label.toLowerCase()} (top 100)</span>
          </a>
          {data.more && <span class="report-more-note">Top {data.rows.length} shown</span>}
          {data.imported?.included && <span class="badge report-imported-badge">Includes imported figures</span>}
        </div>
      )}
      {details && (
        <BreakdownDetails
          title={event ? `${title}: ${event}` : `${title}: ${current.label}`}
          siteId={siteId}
          query={query}
          dimension={dimension}
          name={event ?? undefined}
          onClose={() => setDetails(false)}
          render={(rows) => (
            <BreakdownTable
              rows={rows}
              columns={columns}
              dimension={dimension}
              caption={caption}
              heading={event && drill ? drill.heading : current.label}
              totals={totals}
              event={event}
              filter={current.filter}
              drill={!!drill}
              link={event ? undefined : current.link}
              linkTitle={current.linkTitle}
              onFilter={(name, value) => {
                setDetails(false);
                onFilter(name, value);
              }}
              onEvent={(value) => {
                setDetails(false);
                setEvent(value);
              }}
            />
          )}
        />
      )}
      {!data && !error && <p class="loading">Loading…</p>}
    </section>
  );
}

interface TableProps {
  rows: Row[];
  columns: Column[];
  dimension: string;
  caption: string;
  heading: string;
  totals?: Figures;
  event: string | null;
  filter?: FilterName;
  /** A click on a row shows its drill table (`onEvent`); a "Filter" button beside it filters. */
  drill?: boolean;
  link?: (row: Row) => string;
  linkTitle?: string;
  onFilter: (name: FilterName, value: string) => void;
  onEvent: (value: string) => void;
}

/** Rows with a bar proportional to their share and the share in percent (as the first figure). */
export function BreakdownTable({ rows, columns, dimension, caption, heading, totals, event, filter, drill, link, linkTitle, onFilter, onEvent }: TableProps) {
  const key = shareKey(columns, dimension);
  const measured = shares(rows, key, event ? undefined : totals);
  const showShare = measured.some((m) => m.share !== null);
  return (
    <table class="report-table" data-dimension={dimension}>
      <caption class="visually-hidden">{caption}</caption>
      <thead>
        <tr>
          <th scope="col">{heading}</th>
          {columns.map((c) => (
            <th key={c.key} scope="col" class="num">
              {c.label}
            </th>
          ))}
          {showShare && (
            <th scope="col" class="num report-share">
              <span aria-hidden="true">%</span>
              <span class="visually-hidden">Share of all {String(key).replace("_", " ")}</span>
            </th>
          )}
        </tr>
      </thead>
      <tbody>
        {rows.map((row, index) => {
          const shown = rowText(dimension, row);
          const clickable = !event && (filter || drill);
          const onClick = () => {
            if (drill) onEvent(row.value);
            else if (filter) onFilter(filter, row.value);
          };
          const { share, bar } = measured[index];
          return (
            <tr key={`${row.key ?? ""}${row.value}`}>
              <th scope="row" class="report-value">
                <span class="report-bar" style={{ width: `${(bar * 100).toFixed(1)}%` }} aria-hidden="true" />
                {link ? (
                  <a href={link(row)} target="_top" title={`${linkTitle ?? "Open"} ${shown}`}>
                    <Breakable text={shown} />
                  </a>
                ) : clickable ? (
                  <button
                    type="button"
                    class="link-button"
                    onClick={onClick}
                    title={drill ? `Show the details of ${shown}` : `Filter by ${shown}`}
                  >
                    <Breakable text={shown} />
                  </button>
                ) : (
                  <span>
                    <Breakable text={shown} />
                  </span>
                )}
                {drill && !event && filter && (
                  <button
                    type="button"
                    class="link-button report-filter"
                    onClick={() => onFilter(filter, row.value)}
                    aria-label={`Filter by the ${filter === "event" ? "event" : filter} ${shown}`}
                  >
                    Filter
                  </button>
                )}
              </th>
              {columns.map((c) => (
                <td key={c.key} class="num">
                  {cell(c.key, row)}
                </td>
              ))}
              {showShare && <td class="num report-share">{share === null ? "" : share > 0 && share < 0.01 ? "<1%" : wholePercent.format(share)}</td>}
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** What a row's value column reads. */
function rowText(dimension: string, row: Row): string {
  if (dimension === "prop") return `${row.key}: ${row.value}`;
  if (dimension === "not_found_referrers") return row.kind === "page" ? `Page ${row.value}` : `From ${label("source", row.value)}`;
  if (dimension === "rage_clicks" || dimension === "dead_clicks") return `${row.value} on ${row.page}`;
  return label(dimension, row.value);
}

/** A tab's label; a "UTM " prefix is only read out on a phone, where the four source tabs must fit one line. */
function tabLabel(label: string) {
  if (!label.startsWith("UTM ")) return label;
  return (
    <>
      <span class="tab-prefix">UTM </span>
      {label.slice(4)}
    </>
  );
}
