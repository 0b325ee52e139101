/**
 * `analytics-engagement.js`: how long each page (or SPA route) was actually looked at and how far
 * down it was scrolled, as `engagement` events: `seconds` (whole seconds the tab was visible since
 * the page's previous engagement event) and `scroll` (the deepest point seen so far, 0-100 % of the
 * page's height). An event is sent when the visitor leaves the page or the route, or hides the tab,
 * and only when something new was measured; usually that is one event per page view, and a page's
 * time is the sum of its events' seconds. Never loaded under DNT/GPC (the loader checks, and so does
 * this plugin).
 */
import { D, listen, onRoute } from "../capture/common";
import type { At, Core } from "../plugin";

const MAX_SECONDS = 86400;

(window.analytics as Core)._register("engagement", (host) => {
  if (host.privacy_()) return {};
  let since = performance.now();
  let visibleMs = 0;
  let depth = 0;
  let sentDepth = -1;
  let shown = D.visibilityState == "visible";

  /** Count the time since the last tick if the tab was visible meanwhile. */
  const tick = (): void => {
    const t = performance.now();
    if (shown) visibleMs += t - since;
    since = t;
  };
  const measure = (): void => {
    const page = Math.max(D.documentElement.scrollHeight, D.body?.scrollHeight || 0);
    const seen = scrollY + innerHeight;
    depth = Math.max(depth, page > 0 ? Math.min(100, Math.round((seen / page) * 100)) : 100);
  };
  const send = (at?: At): void => {
    tick();
    if (!at) measure();
    const seconds = Math.min(MAX_SECONDS, Math.round(visibleMs / 1000));
    if (!seconds && depth <= sentDepth) return;
    visibleMs -= seconds * 1000;
    sentDepth = depth;
    host.event_("engagement", { seconds, scroll: depth }, at);
  };
  const restart = (): void => {
    since = performance.now();
    visibleMs = 0;
    depth = 0;
    sentDepth = -1;
    shown = D.visibilityState == "visible";
    setTimeout(measure, 0);
  };

  listen(window, ["scroll", "resize"], measure);
  listen(D, ["visibilitychange"], () => {
    tick();
    shown = D.visibilityState == "visible";
    if (!shown) send(), host.flush_();
  });
  // The page is gone from view from here on: a visibilitychange that follows must not count the
  // moments in between, or it could round a leftover half second up into a second event.
  listen(window, ["pagehide"], () => (send(), (shown = false), host.flush_()));
  // A page restored from the back/forward cache is a new page view, as for pageviews.
  listen(window, ["pageshow"], (e: PageTransitionEvent) => e.persisted && restart());
  onRoute((left) => {
    send(left);
    restart();
  });
  measure();
  return {};
});
