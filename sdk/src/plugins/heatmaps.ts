/**
 * `analytics-heatmaps.js`: where visitors click, as `heatmap_click` events. Props:
 * - `selector`: a CSS selector of the clicked element (tags, `#id` where an id is usable,
 *   `:nth-of-type()` among siblings; never text or input values);
 * - `x`, `y`: where in that element, 0-1 from its left and top edge;
 * - `viewport`: the width class of the window (`mobile`, `tablet`, `laptop`, `desktop`);
 * - `clicks`: how many clicks this event stands for (a burst of fast clicks on one spot is one event);
 * - `rage`: three or more clicks, each within 1 s of the one before and 30 px of the first;
 * - `dead`: nothing happened within 1 s of the burst: no change of the page's content, no scroll, no
 *   navigation, and the element is not a control that acts by itself (links, inputs, labels, ...).
 * Only pointer clicks count (not keyboard activation or script), and never those on what the SDK
 * itself put into the page (the survey widget). Never loaded under DNT/GPC.
 */
import { D, listen, onRoute, ours, safe, viewport } from "../capture/common";
import type { Core } from "../plugin";
import { cut } from "../validate";

const WINDOW_MS = 1000;
const SPOT_PX = 30;
// Controls whose click acts without changing the page's content (focus, a new tab, a checkbox...).
const ACTIVE = "a[href],area[href],input,select,textarea,label,option,summary,button[type=submit],[contenteditable]";

interface Burst {
  el: Element;
  /** Where the first click landed in the element (0-1). */
  x: number;
  y: number;
  /** Where it landed on the screen. */
  sx: number;
  sy: number;
  clicks: number;
  changed: boolean;
}

const id = (e: Element): string => (e.id && !/\d{4,}|[^\w-]/.test(e.id) ? e.id : "");

/** `html>body>main>button#buy`-like path: stops at an element with a stable id, at most 20 steps. */
export const selectorOf = (el: Element): string => {
  const parts: string[] = [];
  for (let e: Element | null = el; e && parts.length < 20; e = e.parentElement) {
    const name = e.localName;
    if (id(e)) {
      parts.unshift(`${name}#${id(e)}`);
      break;
    }
    const parent = e.parentElement;
    const same = parent ? Array.from(parent.children).filter((c) => c.localName == name) : [];
    parts.unshift(same.length > 1 ? `${name}:nth-of-type(${same.indexOf(e) + 1})` : name);
  }
  return cut(parts.join(">"), 1000);
};

const share = (offset: number, size: number): number =>
  size > 0 ? Math.round(Math.min(1, Math.max(0, offset / size)) * 1000) / 1000 : 0.5;

(window.analytics as Core)._register("heatmaps", (host) => {
  if (host.privacy_()) return {};
  let burst: Burst | undefined;
  let timer = 0;
  const observer = new MutationObserver(() => burst && (burst.changed = true));

  const end = safe((leaving?: boolean) => {
    clearTimeout(timer);
    observer.disconnect();
    const b = burst;
    burst = undefined;
    if (!b) return;
    host.event_("heatmap_click", {
      selector: selectorOf(b.el),
      x: b.x,
      y: b.y,
      viewport: viewport(),
      clicks: b.clicks,
      rage: b.clicks >= 3,
      dead: !(b.changed || leaving || b.el.closest(ACTIVE)),
    });
  });

  listen(D, ["click"], (e: MouseEvent) => {
    // Keyboard activation or el.click(); or a click on the SDK's own widget, never the site's.
    if (!e.detail || !(e.target instanceof Element) || ours(e)) return;
    const b = burst;
    if (b && b.el == e.target && Math.hypot(e.clientX - b.sx, e.clientY - b.sy) <= SPOT_PX) b.clicks++;
    else {
      end();
      const rect = e.target.getBoundingClientRect();
      const [x, y] = [share(e.clientX - rect.left, rect.width), share(e.clientY - rect.top, rect.height)];
      burst = { el: e.target, x, y, sx: e.clientX, sy: e.clientY, clicks: 1, changed: false };
      observer.observe(D, { childList: true, subtree: true, attributes: true, characterData: true });
    }
    clearTimeout(timer);
    timer = setTimeout(() => end(), WINDOW_MS);
  });
  // Something happened: the page scrolled or its address changed.
  listen(window, ["scroll", "hashchange"], () => burst && (burst.changed = true));
  onRoute(() => burst && (burst.changed = true));
  // Leaving (or hiding, as a click that opened a new tab does): what is waiting goes now.
  listen(window, ["pagehide"], () => (end(true), host.flush_()));
  listen(D, ["visibilitychange"], () => D.visibilityState == "hidden" && (end(true), host.flush_()));
  return {};
});
