// Page changes in a recording: each page load (rrweb Meta event) and each in-page navigation the
// recorder marked (custom event tagged "page"). The player shows them as marks on its timeline.
import type { RecordedEvent } from "./api";

const FULL_SNAPSHOT = 2;
const META = 4;
const CUSTOM = 5;
export const PAGE_TAG = "page";

export interface PageChange {
  /** Milliseconds from the start of the recording to the moment the page shows (for a page load,
   * just after its full snapshot: at the Meta event itself the previous page is still drawn). */
  offset: number;
  href: string;
}

export function pageChanges(events: RecordedEvent[]): PageChange[] {
  if (!events.length) return [];
  const start = events[0].timestamp;
  const changes: PageChange[] = [];
  events.forEach((event, index) => {
    const href =
      event.type === META
        ? event.data?.href
        : event.type === CUSTOM && event.data?.tag === PAGE_TAG
          ? event.data?.payload?.href
          : undefined;
    if (typeof href !== "string") return;
    let at = event.timestamp;
    if (event.type === META) {
      const snapshot = events.slice(index + 1, index + 50).find((next) => next.type === FULL_SNAPSHOT);
      if (snapshot) at = snapshot.timestamp;
    }
    changes.push({ offset: Math.max(0, at - start + 1), href });
  });
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
