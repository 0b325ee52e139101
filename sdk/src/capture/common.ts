/**
 * What the autocapture plugins share (each plugin bundles only the parts it imports): the snippet's
 * attributes, the current page as an event's place, safe listeners, links under a click, URLs without
 * their query, and SPA route changes.
 */
import type { At, Host } from "../plugin";
import { cut } from "../validate";

export const D = document;

/** Runs `f`, containing any exception: nothing a capture does may reach the page. */
export const safe =
  <A extends unknown[]>(f: (...a: A) => unknown) =>
  (...a: A): void => {
    try {
      f(...a);
    } catch {}
  };

/** The value of the snippet's `data-<name>` attribute (null when absent). */
export const attr = (host: Host, name: string): string | null =>
  D.querySelector(`script[data-site="${CSS.escape(host.key_)}"]`)?.getAttribute("data-" + name) ?? null;

/** The current page as an event's place (url, path, title), cut to the protocol's limits. */
export const here = (): At => ({ url: cut(location.href, 2000), path: cut(location.pathname, 2000), title: cut(D.title, 500) });

/** Listen on `target` in the capture phase (so a page's stopPropagation cannot hide the event). */
export const listen = (target: EventTarget, types: string[], f: (e: any) => unknown): void => {
  for (const type of types) target.addEventListener(type, safe(f), { capture: true, passive: true });
};

/** The attribute on everything the SDK puts into a page (the survey widget): never captured. */
export const OWN = "data-sightline-ui";

/** Whether an event happened on something the SDK put into the page (also inside its shadow root). */
export const ours = (e: Event): boolean =>
  e.composedPath().some((node) => node instanceof Element && node.hasAttribute(OWN));

/** The link a click landed on (also inside open shadow roots), with its absolute URL. */
export const linkOf = (e: MouseEvent): URL | undefined => {
  // A primary click (with or without Ctrl/Cmd/Shift) or a middle click; not the context menu button.
  if (e.type == "auxclick" ? e.button != 1 : e.button) return undefined;
  for (const node of e.composedPath()) {
    if (node instanceof HTMLAnchorElement || node instanceof HTMLAreaElement) {
      if (!node.hasAttribute("href")) return undefined;
      const url = new URL(node.href, location.href);
      return /^https?:$/.test(url.protocol) ? url : undefined;
    }
  }
  return undefined;
};

/** Clicks on links (new ones too: the listener sits on the document), primary and middle button. */
export const onLink = (f: (url: URL, link: Element) => void): void =>
  listen(D, ["click", "auxclick"], (e: MouseEvent) => {
    const url = ours(e) ? undefined : linkOf(e);
    if (url) f(url, e.target as Element);
  });

/** A URL as stored: scheme, host and path, without query or fragment (they may carry tokens). */
export const bare = (url: URL): string => cut(url.origin + url.pathname, 2000);

/** The viewport's width class, as ingest classes screens: mobile < 576 <= tablet < 992 <= laptop < 1440 <= desktop. */
export const viewport = (): string => {
  const w = innerWidth;
  return w < 576 ? "mobile" : w < 992 ? "tablet" : w < 1440 ? "laptop" : "desktop";
};

/**
 * Calls `f(left)` after every change of path or query by history.pushState/replaceState or popstate,
 * with the page that was left (a fragment-only change is not a new page, as for pageviews).
 */
export const onRoute = (f: (left: At) => void): void => {
  let page = here();
  let key = location.pathname + location.search;
  const check = safe(() => {
    const now = location.pathname + location.search;
    if (now != key) {
      const left = page;
      key = now;
      page = here();
      f(left);
    } else page = here();
  });
  for (const method of ["pushState", "replaceState"] as const) {
    const original = history[method];
    history[method] = function (this: History, ...args: Parameters<History["pushState"]>) {
      const result = original.apply(this, args);
      check();
      return result;
    };
  }
  addEventListener("popstate", check);
};
