// Page changes in a recording: each page load (rrweb Meta event) and each in-page navigation the
// recorder marked (custom event tagged "page"). The player shows them as marks on its timeline.
import type { RecordedEvent } from "./api";

const META = 4;
const CUSTOM = 5;
export const PAGE_TAG = "page";

export interface PageChange {
  /** Milliseconds from the start of the recording. */
  offset: number;
  href: string;
}

export function pageChanges(events: RecordedEvent[]): PageChange[] {
  if (!events.length) return [];
  const start = events[0].timestamp;
  const changes: PageChange[] = [];
  for (const event of events) {
    const href =
      event.type === META
        ? event.data?.href
        : event.type === CUSTOM && event.data?.tag === PAGE_TAG
          ? event.data?.payload?.href
          : undefined;
    if (typeof href === "string") changes.push({ offset: Math.max(0, event.timestamp - start), href });
  }
  return changes;
}

/** The events with a "page" mark for every page load after the first (the recorder marks in-page ones). */
export function withPageMarks(events: RecordedEvent[]): RecordedEvent[] {
  const marked: RecordedEvent[] = [];
  let loads = 0;
  for (const event of events) {
    if (event.type === META && loads++ > 0) {
      marked.push({ type: CUSTOM, timestamp: event.timestamp, data: { tag: PAGE_TAG, payload: { href: event.data?.href } } });
    }
    marked.push(event);
  }
  return marked;
}

/** "https://shop.example/pricing?x=1" -> "/pricing?x=1" (the full address stays in the title). */
export function shortPath(href: string): string {
  try {
    const url = new URL(href);
    return url.pathname + url.search;
  } catch {
    return href;
  }
}
