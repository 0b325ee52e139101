/**
 * `analytics-capture.js`: the autocapture loader. The core loads it once the events connection is
 * ready (after `start()`, so never before consent); it loads each capture plugin only when needed:
 *
 * - `outbound-links`, `file-downloads`, `engagement`, `web-vitals`, `heatmaps`: when the snippet has
 *   `data-<name>` (any value but "false"; "false" turns the capture off on that page) or, without the
 *   attribute, when the site's settings turn it on (`config.capture`). Under Do-Not-Track or Global
 *   Privacy Control `engagement` and `heatmaps` are never loaded, as the recorder is not.
 * - `tagged`: when the page holds an element with `data-analytics-event`, now or later.
 * - `not-found`: when the page holds an element with `data-analytics-404`, now or later.
 *
 * It also opens each survey the owner set to open by itself (`config.surveys`) once its delay has
 * passed, through `feedback(id)`: that checks targeting, earlier answers, privacy and open surveys.
 */
import { attr, D, safe } from "../capture/common";
import type { Core } from "../plugin";

const CAPTURES = ["outbound-links", "file-downloads", "engagement", "web-vitals", "heatmaps"];
const PRIVATE = ["engagement", "heatmaps"];
const MARKERS: [string, string][] = [
  ["tagged", "[data-analytics-event]"],
  ["not-found", "[data-analytics-404]"],
];

(window.analytics as Core)._register("capture", (host) => {
  for (const name of CAPTURES) {
    const value = attr(host, name);
    const on = value != null ? value != "false" : !!host.config_.capture?.includes(name);
    if (on && !(host.privacy_() && PRIVATE.includes(name))) host.load_(name);
  }
  // Markup-driven captures: look now, and whenever the page's content changes (SPA routes, late
  // content), at most every 100 ms, until each one that can be loaded is.
  let waiting = MARKERS.slice();
  let timer = 0;
  const look = safe(() => {
    timer = 0;
    waiting = waiting.filter(([name, selector]) => !(D.querySelector(selector) && host.load_(name)));
    if (!waiting.length) observer.disconnect();
  });
  const observer = new MutationObserver(() => (timer ||= setTimeout(look, 100)));
  observer.observe(D, { childList: true, subtree: true, attributes: true, attributeFilter: ["data-analytics-event", "data-analytics-404"] });
  look();
  for (const survey of host.config_.surveys || []) {
    setTimeout(safe(() => (window.analytics as Core).feedback("" + survey.id)), survey.delay_seconds * 1e3);
  }
  return {};
});
