// The reports API (docs/reports.md): the query the dashboard keeps in its URL, and the answers.
import { request } from "../api";
import type { Annotation } from "./notes";

export const RANGE_NAMES = ["realtime", "today", "yesterday", "7d", "30d", "month", "last_month", "12mo", "all", "custom"] as const;
export type RangeName = (typeof RANGE_NAMES)[number];
/** How a time series is cut: realtime by the minute, up to two days by the hour, longer by the day. */
export type Interval = "minute" | "hour" | "day";
import { FILTER_NAMES, type FilterName } from "./dimensions.gen";

export { FILTER_NAMES, type FilterName };

export interface ReportQuery {
  range: RangeName;
  from?: string;
  to?: string;
  compare: boolean;
  /** With compare: the previous period (default) or the same period a year before. */
  comparison?: "previous" | "year";
  /** Add imported history where the report has it (default); false: collected figures only. */
  imported: boolean;
  filters: Partial<Record<FilterName, string>>;
}

/** Whether an answer includes imported figures, else why not (docs/imports.md). */
export interface ImportedNote {
  included: boolean;
  reason: null | "none" | "unavailable" | "turned_off" | "filters" | "hourly" | "dimension";
}

export interface Figures {
  visitors: number;
  visits: number;
  pageviews: number;
  views_per_visit: number;
  bounce_rate: number;
  visit_duration: number;
}

export interface RangeInfo {
  name?: RangeName;
  from: string;
  to: string;
  start: string;
  end: string;
}

interface Meta {
  site_id: number;
  timezone: string;
  range: RangeInfo;
  previous_range?: RangeInfo;
  filters: Partial<Record<FilterName, string>>;
  source: "store";
  imported?: ImportedNote;
}

export interface Summary extends Meta {
  current: Figures;
  previous: Figures | null;
}

export interface Point extends Figures {
  time: string;
}

export interface Series extends Meta {
  interval: Interval;
  points: Point[];
  previous: Point[] | null;
  /** The site's notes on the days of the period (docs/reports.md "Annotations"). */
  annotations?: Annotation[];
}

export interface Row extends Partial<Figures> {
  value: string;
  key?: string;
  events?: number;
  goal_id?: number;
  conversions?: number;
  conversion_rate?: number;
  revenue?: { total: number; average: number; currency: string };
  /** A 404 path's referrer: the page viewed before it, or the visit's source. */
  kind?: "page" | "source";
  /** Rage and dead clicks: the page of the clicked element (`value` is its CSS selector). */
  page?: string;
  clicks?: number;
  time_on_page?: number;
  scroll_depth?: number;
  lcp?: number | null;
  inp?: number | null;
  cls?: number | null;
  lcp_rating?: Rating | null;
  inp_rating?: Rating | null;
  cls_rating?: Rating | null;
}

export type Rating = "good" | "needs-improvement" | "poor";

export interface Vital {
  name: "LCP" | "INP" | "CLS" | "FCP" | "TTFB";
  p75: number | null;
  rating: Rating | null;
  samples: number;
  good: number;
  needs_improvement: number;
  poor: number;
}

export interface WebVitals extends Meta {
  vitals: Vital[];
}

/** A heatmap's width classes: desktop (992 px and up), tablet (576-991 px), phone. */
export type HeatViewport = "desktop" | "tablet" | "phone";
export const HEAT_VIEWPORTS: HeatViewport[] = ["desktop", "tablet", "phone"];

/** Clicks on one cell of an element: `x`, `y` are the cell's centre, 0-1 from the element's left and top edge. */
export interface HeatSpot {
  selector: string;
  x: number;
  y: number;
  clicks: number;
}

export interface Heatmap extends Meta {
  path: string;
  viewport: HeatViewport | null;
  /** Clicks of the chosen width class (of every width without one). */
  clicks: number;
  viewports: Record<HeatViewport, number>;
  /** The most clicked cells (5,000 at most; `more` when there were more). */
  spots: HeatSpot[];
  more: boolean;
}

export interface Breakdown extends Meta {
  dimension: string;
  rows: Row[];
  more: boolean;
}

export interface Realtime {
  site_id: number;
  window_seconds: number;
  visitors: number;
  pageviews: number;
  pages: { value: string; visitors: number }[];
  /** The last 30 minutes, oldest first; the last one is still running. */
  minutes: { start: string; visitors: number; pageviews: number }[];
}

export function queryParams(query: ReportQuery): URLSearchParams {
  const params = new URLSearchParams({ range: query.range });
  if (query.range === "custom") {
    if (query.from) params.set("from", query.from);
    if (query.to) params.set("to", query.to);
  }
  if (query.compare) params.set("compare", query.comparison === "year" ? "year" : "true");
  if (query.imported === false) params.set("imported", "false");
  for (const [name, value] of Object.entries(query.filters)) if (value) params.set(name, value);
  return params;
}

export function parseQuery(search: string): ReportQuery {
  const params = new URLSearchParams(search);
  const raw = params.get("range");
  const range: RangeName = (RANGE_NAMES as readonly string[]).includes(raw ?? "") ? (raw as RangeName) : "7d";
  const filters: ReportQuery["filters"] = {};
  for (const name of FILTER_NAMES) {
    const value = params.get(name);
    if (value) filters[name] = value;
  }
  return {
    range,
    from: params.get("from") ?? undefined,
    to: params.get("to") ?? undefined,
    compare: params.get("compare") !== "false",
    comparison: params.get("compare") === "year" ? "year" : "previous",
    imported: params.get("imported") !== "false",
    filters,
  };
}

let base = (siteId: number) => `/api/sites/${siteId}/reports`;

/** Reads the reports through a shared dashboard link instead of the console session. */
export function readThroughShare(token: string): void {
  base = () => `/share/${encodeURIComponent(token)}/api/reports`;
}

/** Where each report table downloads as CSV (docs/exports.md); raw events only in the console. */
export const downloads = {
  summary: (siteId: number, q: ReportQuery) => `${base(siteId)}/export/summary.csv?${queryParams(q)}`,
  timeseries: (siteId: number, q: ReportQuery) => `${base(siteId)}/export/timeseries.csv?${queryParams(q)}`,
  breakdown: (siteId: number, q: ReportQuery, dimension: string, name?: string, viewport?: HeatViewport) => {
    const params = queryParams({ ...q, compare: false });
    params.set("dimension", dimension);
    params.set("limit", "100");
    if (name) params.set("name", name);
    if (viewport) params.set("viewport", viewport);
    return `${base(siteId)}/export/breakdown.csv?${params}`;
  },
  events: (siteId: number, q: ReportQuery) => {
    const params = queryParams({ ...q, compare: false, filters: {} });
    return `/api/sites/${siteId}/events.csv?${params}`;
  },
};

export const reports = {
  summary: (siteId: number, q: ReportQuery) =>
    request<Summary>("GET", `${base(siteId)}/summary?${queryParams(q)}`),
  timeseries: (siteId: number, q: ReportQuery) =>
    request<Series>("GET", `${base(siteId)}/timeseries?${queryParams(q)}`),
  /** One page of a breakdown: `limit` rows after `offset`, only values containing `search`. */
  breakdown: (
    siteId: number,
    q: ReportQuery,
    dimension: string,
    name?: string,
    page: { limit?: number; offset?: number; search?: string; viewport?: HeatViewport } = {},
  ) => {
    const params = queryParams({ ...q, compare: false });
    params.set("dimension", dimension);
    params.set("limit", String(page.limit ?? 10));
    if (page.offset) params.set("offset", String(page.offset));
    if (page.search) params.set("search", page.search);
    if (name) params.set("name", name);
    if (page.viewport) params.set("viewport", page.viewport);
    return request<Breakdown>("GET", `${base(siteId)}/breakdown?${params}`);
  },
  /** One page's clicks per element and position cell, and per width class. */
  heatmap: (siteId: number, q: ReportQuery, path: string, viewport: HeatViewport) => {
    const params = queryParams({ ...q, compare: false });
    params.set("path", path);
    params.set("viewport", viewport);
    return request<Heatmap>("GET", `${base(siteId)}/heatmap?${params}`);
  },
  webVitals: (siteId: number, q: ReportQuery) =>
    request<WebVitals>("GET", `${base(siteId)}/vitals?${queryParams({ ...q, compare: false })}`),
  realtime: (siteId: number) => request<Realtime>("GET", `${base(siteId)}/realtime`),
};
