// Event names as the owner reads them: the SDK's click captures (autocapture, docs/sdk.md) under
// readable names, apart from the owner's own events. The measurements (engagement, web vitals,
// heatmap clicks) have reports of their own and are never listed among events.

/** The captures the SDK sends for the visitor's own clicks and missing pages, by readable name. */
export const CAPTURED: Record<string, string> = {
  outbound_link: "Outbound link",
  file_download: "File download",
  "404": "Page not found (404)",
};

/** Whether an event is one the SDK captured on its own rather than one the site sends. */
export function isCaptured(name: string): boolean {
  return Object.hasOwn(CAPTURED, name);
}

/** An event's name as the console shows it: a capture's readable name, marked as automatic. */
export function eventName(name: string): string {
  return isCaptured(name) ? `${CAPTURED[name]} (automatic)` : name;
}
