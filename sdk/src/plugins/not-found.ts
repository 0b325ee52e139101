/**
 * `analytics-not-found.js`: a page holding an element with `data-analytics-404` (for example
 * `<body data-analytics-404>`) is a not-found page: one `404` event with the page's `path` (the
 * event's referrer tells where the visitor came from). In a single-page application each new path
 * that shows a marker counts once. Without the attribute, one line does the same:
 * `analytics.event("404", { path: location.pathname })`.
 */
import { D, safe } from "../capture/common";
import type { Core } from "../plugin";
import { cut } from "../validate";

(window.analytics as Core)._register("not-found", (host) => {
  let reported = "";
  let timer = 0;
  const look = safe(() => {
    timer = 0;
    const path = location.pathname;
    if (path != reported && D.querySelector("[data-analytics-404]")) {
      reported = path;
      host.event_("404", { path: cut(path, 2000) });
    }
  });
  new MutationObserver(() => (timer ||= setTimeout(look, 100))).observe(D, {
    childList: true,
    subtree: true,
    attributes: true,
    attributeFilter: ["data-analytics-404"],
  });
  look();
  return {};
});
