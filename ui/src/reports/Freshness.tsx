// A banner on the dashboard when its figures may be stale: the analytics store is behind or
// failing (or the database is down). Reads GET /api/health, as the Health page does.
import { api, type Health } from "../api";
import { count, dateTime, timeAgo } from "../format";
import { useAutoRefresh, useResource } from "../hooks";

export const FRESHNESS_REFRESH_MS = 30_000;

function behind(seconds: number): string {
  if (seconds < 90) return `${Math.round(seconds)} seconds`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} minutes`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)} hours`;
  return `${Math.round(seconds / 86_400)} days`;
}

/** What a health report says about the figures of the reports, or null when they are current. */
export function staleness(report: Health): { title: string; detail: string[] } | null {
  const store = report.services.store;
  const database = report.services.database;
  const detail: string[] = [];
  let title = "";
  if (database && database.status === "down") {
    title = "The database is down: new visits are not being stored.";
    if (typeof database.problem === "string") detail.push(database.problem);
    if (typeof database.fix === "string") detail.push(`What to do: ${database.fix}`);
  }
  if (store && store.status !== "ok") {
    const lagSeconds = typeof store.lag_seconds === "number" ? store.lag_seconds : 0;
    const lagEvents = typeof store.lag_events === "number" ? store.lag_events : 0;
    const since = typeof store.failing_since === "string" ? store.failing_since : null;
    const parts: string[] = [];
    if (store.status === "down") parts.push("The reports cannot be updated right now");
    else parts.push("The reports are behind");
    if (lagEvents > 0) parts.push(`: the latest ${count(lagEvents)} events (${behind(lagSeconds)}) are not in them yet`);
    title ||= `${parts.join("")}.`;
    if (since) detail.push(`Since ${dateTime(since)} (${timeAgo(since)}).`);
    if (typeof store.problem === "string" && store.problem) detail.push(store.problem);
    if (typeof store.fix === "string" && store.fix) detail.push(`What to do: ${store.fix}`);
  }
  return title ? { title, detail } : null;
}

export function Freshness() {
  const health = useResource(api.health);
  useAutoRefresh(health.reload, FRESHNESS_REFRESH_MS);
  const stale = health.data ? staleness(health.data) : null;
  if (!stale) return null;
  return (
    <div class="notice notice-warning stale" role="alert">
      <span class="notice-icon" aria-hidden="true" />
      <div>
        <strong>{stale.title}</strong>
        {stale.detail.map((line) => (
          <span key={line} class="stale-line">
            {line}
          </span>
        ))}
        <a href="/health">Open Health</a>
      </div>
    </div>
  );
}
