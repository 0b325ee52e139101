// The periods of the dashboard and of the all-sites view (one menu, reports/PeriodControls.tsx):
// their labels and keyboard shortcuts.
import type { RangeName } from "./api";

/** One period of the menu: its name in the API, its label, its keyboard shortcut, and whether it is a button. */
export interface Range {
  name: RangeName;
  label: string;
  key: string;
  button: boolean;
}

/** The periods: the common ones as buttons, the rest in a menu; each with its keyboard shortcut. */
export const RANGES: readonly Range[] = [
  { name: "realtime", label: "Realtime", key: "r", button: false },
  { name: "today", label: "Today", key: "d", button: true },
  { name: "yesterday", label: "Yesterday", key: "e", button: false },
  { name: "7d", label: "7 days", key: "w", button: true },
  { name: "30d", label: "30 days", key: "t", button: true },
  { name: "month", label: "This month", key: "m", button: false },
  { name: "last_month", label: "Last month", key: "l", button: false },
  { name: "12mo", label: "12 months", key: "y", button: false },
  { name: "all", label: "All time", key: "a", button: false },
  { name: "custom", label: "Custom", key: "c", button: true },
];

/** The periods that span days (the all-sites view has no realtime). */
export const SPAN_RANGES = RANGES.filter((r) => r.name !== "realtime");

/** Whether a key press belongs to a field (typing) rather than to the page's shortcuts. */
export function typing(event: KeyboardEvent): boolean {
  const target = event.target as HTMLElement | null;
  if (event.ctrlKey || event.metaKey || event.altKey) return true;
  return !!target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName) || !!target.closest("dialog[open]"));
}
