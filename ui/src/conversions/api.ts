// Funnels, retention, journeys and saved funnels and segments (docs/reports.md "Conversions").
import { request } from "../api";
import { queryParams, type ReportQuery } from "../reports/api";
import { eventName, isCaptured } from "../reports/events";

export interface FunnelStep {
  label: string;
  visitors: number;
  conversion_rate: number;
  step_conversion_rate: number;
  dropoff: number;
  median_seconds: number | null;
}

export interface FunnelAnswer {
  steps: FunnelStep[];
  dimension?: string;
  breakdown?: { value: string; steps: FunnelStep[] }[];
}

export interface RetentionAnswer {
  interval: "week" | "day";
  periods: number;
  cohorts: { start: string; visitors: number; returning: number[] }[];
}

export interface JourneysAnswer {
  start: string;
  direction: "next" | "previous";
  paths: { steps: string[]; visitors: number }[];
}

export interface SavedFunnel {
  id: number;
  name: string;
  steps: string[];
}

export interface Segment {
  id: number;
  name: string;
  filters: Record<string, string>;
}

const base = (siteId: number) => `/api/sites/${siteId}/reports`;

export const conversions = {
  funnel: (siteId: number, q: ReportQuery, steps: string[], dimension?: string) => {
    const params = queryParams({ ...q, compare: false });
    for (const step of steps) params.append("step", step);
    if (dimension) params.set("dimension", dimension);
    return request<FunnelAnswer>("GET", `${base(siteId)}/funnel?${params}`);
  },
  retention: (siteId: number, q: ReportQuery, interval: string, periods: number) => {
    const params = queryParams({ ...q, compare: false });
    params.set("interval", interval);
    params.set("periods", String(periods));
    return request<RetentionAnswer>("GET", `${base(siteId)}/retention?${params}`);
  },
  journeys: (siteId: number, q: ReportQuery, from: string, direction: string, depth: number) => {
    const params = queryParams({ ...q, compare: false });
    // Beside a custom period's own `from` date, not in its place: the API tells them apart by
    // the step's `page:` or `event:` prefix.
    params.append("from", from);
    params.set("direction", direction);
    params.set("depth", String(depth));
    return request<JourneysAnswer>("GET", `${base(siteId)}/journeys?${params}`);
  },
  funnels: (siteId: number) => request<{ funnels: SavedFunnel[] }>("GET", `/api/sites/${siteId}/funnels`).then((r) => r.funnels),
  saveFunnel: (siteId: number, name: string, steps: string[]) => request<SavedFunnel>("POST", `/api/sites/${siteId}/funnels`, { name, steps }),
  deleteFunnel: (id: number) => request<void>("DELETE", `/api/funnels/${id}`),
  segments: (siteId: number) => request<{ segments: Segment[] }>("GET", `/api/sites/${siteId}/segments`).then((r) => r.segments),
  saveSegment: (siteId: number, name: string, filters: Record<string, string>) =>
    request<Segment>("POST", `/api/sites/${siteId}/segments`, { name, filters }),
  deleteSegment: (id: number) => request<void>("DELETE", `/api/segments/${id}`),
};

/** A step as people read it: "/pricing" for a page, "signup (event)" for an event. */
export function stepText(step: string): string {
  if (step.startsWith("page:")) return step.slice(5);
  if (step.startsWith("event:")) {
    const name = step.slice(6);
    return isCaptured(name) ? eventName(name) : `${name} (event)`;
  }
  return step;
}
