// The figures of the dashboard: their labels, formats and how a change is read.
import { count } from "../format";
import type { Figures } from "./api";

export type Metric = keyof Figures;

const percent = new Intl.NumberFormat(undefined, { style: "percent", maximumFractionDigits: 1 });
const decimal = new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 });

export function duration(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, "0")}m`;
}

export const METRICS: { key: Metric; label: string; format: (v: number) => string; lowerIsBetter?: boolean }[] = [
  { key: "visitors", label: "Unique visitors", format: count },
  { key: "visits", label: "Visits", format: count },
  { key: "pageviews", label: "Pageviews", format: count },
  { key: "views_per_visit", label: "Views per visit", format: (v) => decimal.format(v) },
  { key: "bounce_rate", label: "Bounce rate", format: (v) => percent.format(v), lowerIsBetter: true },
  { key: "visit_duration", label: "Visit duration", format: duration },
];

export function metricOf(key: Metric) {
  return METRICS.find((m) => m.key === key) ?? METRICS[0];
}

/** "+12%" against the previous period, or null when there is nothing to compare with. */
export function change(current: number, previous: number | undefined): number | null {
  if (previous === undefined || previous === 0) return null;
  return (current - previous) / previous;
}

export function changeText(value: number): string {
  const sign = value > 0 ? "+" : value < 0 ? "−" : "±";
  return `${sign}${percent.format(Math.abs(value))}`;
}
