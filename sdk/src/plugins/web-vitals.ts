/**
 * `analytics-web-vitals.js`: the Core Web Vitals of real visits, measured by Google's `web-vitals`
 * library (PerformanceObserver): LCP, INP, CLS, FCP and TTFB, each sent once per page load as a
 * `web_vital` event with `name`, `value` (milliseconds; CLS without unit) and `rating` (`good`,
 * `needs-improvement` or `poor`, by the library's thresholds, which are the industry's). LCP, CLS
 * and INP are final only when the page is hidden; their events are then handed to sendBeacon.
 */
import { onCLS, onFCP, onINP, onLCP, onTTFB, type Metric } from "web-vitals";

import { D, safe } from "../capture/common";
import type { Core } from "../plugin";

(window.analytics as Core)._register("web-vitals", (host) => {
  const report = safe((metric: Metric) => {
    const value = metric.name == "CLS" ? Math.round(metric.value * 1e4) / 1e4 : Math.round(metric.value);
    host.event_("web_vital", { name: metric.name, value: Math.max(0, value), rating: metric.rating });
    if (D.visibilityState == "hidden") host.flush_();
  });
  for (const on of [onLCP, onINP, onCLS, onFCP, onTTFB]) on(report);
  return {};
});
