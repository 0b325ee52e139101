/**
 * `analytics-exclude.js`: the owner's exclusion link. The console's link opens the site with
 * `?sightline=exclude` (or `?sightline=include`); the core loads this plugin only when the address
 * has a `sightline=` parameter, and before it asks for the configuration. It marks this browser
 * (`localStorage.sightline_ignore`) or removes the mark; the core then reads the mark and, while it
 * is set, stays `disabled` on every page of the site and sends nothing.
 */
import type { Core } from "../plugin";

const MARK = "sightline_ignore";

(window.analytics as Core)._register("exclude", () => {
  const m = /[?&]sightline=(ex|in)clude/.exec(location.search);
  try {
    if (m) m[1] == "ex" ? localStorage.setItem(MARK, "1") : localStorage.removeItem(MARK);
  } catch {}
  return {};
});
