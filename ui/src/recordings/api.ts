// The recordings part of the console API (see docs/recordings.md).
import { request } from "../api";

export interface Recording {
  id: string;
  session_id: string;
  visitor_id: string;
  started_at: string;
  duration_ms: number;
  pages: number;
  size_bytes: number;
  /** The path of the visit's first recorded page; null for recordings made before it was kept. */
  entry_page: string | null;
  browser: string | null;
  /** desktop, mobile or tablet */
  device: string | null;
}

export interface RecordingDetails extends Recording {
  site_id: number;
  chunks: number;
  updated_at: string;
}

/** An rrweb event as the recorder stored it. */
export interface RecordedEvent {
  type: number;
  timestamp: number;
  data: any;
}

/** A page as a recording shows it: the recorder's meta event and full snapshot (masked). */
export interface PageSnapshot {
  recording_id: string;
  recorded_at: string;
  /** The recorded window's size in CSS pixels. */
  width: number;
  height: number;
  viewport: "desktop" | "tablet" | "phone";
  events: RecordedEvent[];
}

export const PAGE_SIZE = 50;

export const recordingsApi = {
  list: (siteId: number, offset = 0) =>
    request<{ recordings: Recording[] }>("GET", `/api/sites/${siteId}/recordings?offset=${offset}`).then(
      (r) => r.recordings,
    ),
  get: (id: string) => request<RecordingDetails>("GET", `/api/recordings/${encodeURIComponent(id)}`),
  events: (id: string) =>
    request<{ events: RecordedEvent[] }>("GET", `/api/recordings/${encodeURIComponent(id)}/events`).then(
      (r) => r.events,
    ),
  /** The newest recorded snapshot of `path` (of the `viewport` width class when one exists). */
  snapshot: (siteId: number, path: string, viewport: string) =>
    request<{ recording_enabled: boolean; snapshot: PageSnapshot | null }>(
      "GET",
      `/api/sites/${siteId}/recordings/snapshot?${new URLSearchParams({ path, viewport })}`,
    ),
  remove: (id: string) => request<void>("DELETE", `/api/recordings/${encodeURIComponent(id)}`),
};

/** "1 min 05 s", "42 s". */
export function duration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${String(seconds % 60).padStart(2, "0")} s`;
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, "0")} min`;
}

const DEVICES: Record<string, string> = { desktop: "Desktop", mobile: "Mobile", tablet: "Tablet" };

/** "Chrome · Desktop": the browser and device type a recording came from, as far as known. */
export function clientOf(recording: Pick<Recording, "browser" | "device">): string {
  const device = recording.device ? (DEVICES[recording.device] ?? recording.device) : null;
  const parts = [recording.browser, device].filter((part): part is string => !!part);
  return parts.length ? parts.join(" · ") : "Unknown";
}

/** How long a recording lasts; one shorter than half a second is not called "0 s". */
export function length(ms: number): string {
  return ms < 500 ? "under 1 s" : duration(ms);
}
