/**
 * The core script, `analytics.js`: defines `window.analytics` (see ../analytics.d.ts).
 *
 * Flow: start() -> visitor code and visit from storage -> GET i/config -> events connection ready.
 * Nothing is written to storage until the configuration says the site is not cookieless (or a code
 * stored earlier shows it was not); a cookieless site's SDK removes what an earlier visit stored and
 * sends "-" as the visitor code: the server derives it (and the visit) from a daily salt.
 * Events made before readiness wait in `queue` (100 at most, oldest dropped); afterwards in `buf`,
 * which is cut into batches (20 events, 3 s, 64 KiB) placed in `out`. `out` is mirrored to
 * sessionStorage and sent one batch at a time; a batch keeps its batch_id across retries, page
 * reloads and sendBeacon, so the server stores it once. No call, timer or listener lets an exception
 * escape into the page, except the deliberate TypeErrors of argument checks.
 */
import type { ConnectionState, Props, SessionContext, Status, Utm } from "../analytics";
import type { Config, Core, Host, Plugin, PluginFactory } from "./plugin";
import { bytes, checkId, checkName, checkProps, cut } from "./validate";

interface Ev {
  name: string;
  props: Props;
  ts: number;
  visitor_id: string;
  session_id: string;
  url: string;
  path: string;
  referrer: string;
  title: string;
  screen: number;
  language: string;
  utm?: Utm;
}
interface Batch {
  key: string;
  batch_id: string;
  events: Ev[];
  sent_at?: number;
}
/** A visit: id, started, last activity, utm tags, sampling draw. */
interface Visit {
  i: string;
  t: number;
  l: number;
  u: Utm;
  r: number;
}

const W = window;
const D = document;
const N = navigator as Navigator & { globalPrivacyControl?: boolean };
const L = "localStorage";
const S = "sessionStorage";
const VISITOR = "sightline_visitor";
const VISIT = "sightline_visit";
const MAX_BODY = 65536;
const loc = location;

const el = (D.currentScript || D.querySelector("script[data-site]")) as HTMLScriptElement | null;
/** The snippet's data-* attributes (data-site, data-consent, data-auto-pageviews). */
const data: DOMStringMap = el?.dataset || {};
const key = data.site || "";
let base = "";
try {
  base = new URL(".", el!.src).href;
} catch {}
const autoPageviews = data.autoPageviews != "false";
const outKey = "sightline_out_" + key;

let startup: Promise<Status> | undefined;
let st: Status = {};
let ready: number | undefined;
let dead: number | undefined;
let dropped = 0;
let queue: Ev[] = [];
let buf: Ev[] = [];
let out: Batch[] = [];
let inflight: Batch | undefined;
let waiting: number | undefined;
let attempt = 0;
let flushTimer: number | undefined;
let visitor = "";
let memVisit: Visit | undefined;
let recordingId: string | undefined;
let lastPage: string | undefined;
let keep: number | undefined; // 1 once storage may be written (not a cookieless site)
let named: number | undefined; // 1 once identify() named the visitor
const plugins: Record<string, Promise<Plugin | void>> = {};
const registrations: Record<string, (factory: PluginFactory) => void> = {};

/** Runs `f`, containing any exception. */
const safe =
  <A extends unknown[]>(f: (...a: A) => unknown) =>
  (...a: A): void => {
    try {
      f(...a);
    } catch {}
  };

const store = (area: typeof L | typeof S, name: string, value?: unknown): any => {
  try {
    if (value === undefined) return JSON.parse(W[area].getItem(name)!);
    if (keep) W[area].setItem(name, JSON.stringify(value));
  } catch {}
};

const rid = (): string => Array.from(crypto.getRandomValues(new Uint8Array(21)), (b) => (b % 36).toString(36)).join("");

const privacy = (): boolean => N.doNotTrack == "1" || N.globalPrivacyControl === true;

const now = Date.now;

const backoff = (retryAfter?: string | null): number =>
  +retryAfter! >= 0 && retryAfter ? +retryAfter * 1e3 : Math.min(6e4, 1e3 * 2 ** attempt++) * (0.5 + Math.random() / 2);

/** The server asks to come back later (429) or failed (5xx): retry with backoff. */
const busy = (r: Response): boolean => r.status == 429 || r.status > 499;

const campaign = (): Utm => {
  const query = new URLSearchParams(loc.search);
  const utm: Record<string, string> = {};
  for (const tag of ["source", "medium", "campaign", "term", "content"]) {
    const value = query.get("utm_" + tag);
    if (value) utm[tag] = cut(value, 200);
  }
  return utm;
};

/** The current visit, renewed after 30 minutes without activity; `touch` records activity. */
const visit = (touch?: 1): Visit => {
  let v: Visit | undefined = store(L, VISIT) || memVisit;
  const t = now();
  const utm = campaign();
  if (!v?.i || t - v.l > 18e5) v = { i: rid(), t, l: t, u: utm, r: Math.random() };
  else if (touch && Object.keys(utm).length) v.u = utm;
  if (touch) v.l = t;
  store(L, VISIT, (memVisit = v));
  return v;
};

/** Before start: the page only; afterwards the visit too (its tags are the landing page's). */
const context = (): SessionContext => {
  const v = startup && visit();
  return {
    url: loc.href,
    path: loc.pathname,
    referrer: D.referrer,
    utm: v ? v.u : campaign(),
    ...(v && { sessionId: v.i, visitorId: analytics.getVisitorId(), startedAt: new Date(v.t).toISOString() }),
    ...(recordingId && { recordingId }),
  };
};

const saveOut = (): void => store(S, outKey, out);

const states = (events: ConnectionState, feedback = events, recording: ConnectionState = "disabled"): void => {
  st = { events, recording, feedback };
};

/** Stop for good: the server refused the site (`error`) or collection is off (`disabled`). */
const halt = (state: ConnectionState): void => {
  states(state);
  dead = 1;
  queue = buf = out = [];
  saveOut();
};

/** Stop on the server's refusal `j`: `disabled` when the owner switched collection off, else `error`. */
const refused = (j: any): void => halt(j.error?.code == "collection_disabled" ? "disabled" : "error");

/** Cut `queue` and `buf` into batches of at most 20 events and 64 KiB, appended to `out` (50 batches at most). */
const seal = (): void => {
  clearTimeout(flushTimer);
  flushTimer = 0;
  buf.push(...queue); // what waited for readiness (or the page is hidden before it)
  queue = [];
  while (buf.length) {
    const batch: Batch = { key, batch_id: rid(), events: [] };
    let size = 200;
    // An event too large for any batch still goes alone: the server refuses it (413), the SDK drops it.
    while (buf.length && batch.events.length < 20) {
      size += bytes(buf[0]);
      if (size > MAX_BODY && batch.events.length) break;
      batch.events.push(buf.shift()!);
    }
    out.push(batch);
  }
  while (out.length > 50) dropped += out.shift()!.events.length;
  saveOut();
};

/** A batch as sent: stamped with this attempt's time, so the server keeps late events' times. */
const wire = (batch: Batch): string => ((batch.sent_at = now()), JSON.stringify(batch));

const send = (): void => {
  const batch = out[0];
  if (!ready || dead || inflight || waiting || !batch) return;
  inflight = batch;
  const settle = (retryAfter?: string | null | 0): void => {
    inflight = undefined;
    if (retryAfter !== 0) waiting = setTimeout(safe(() => ((waiting = 0), send())), backoff(retryAfter));
    else {
      attempt = 0;
      out = out.filter((b) => b != batch);
      saveOut();
      send();
    }
  };
  fetch(base + "i/events", { method: "POST", body: wire(batch), keepalive: true, credentials: "omit" })
    .then(
      (r) =>
        busy(r)
          ? settle(r.headers.get("retry-after"))
          : r.status == 403 || r.status == 404
            ? r
                .json()
                .catch(() => ({}))
                .then(refused)
            : settle(0), // 2xx stored; another 4xx: this batch can never be stored, drop it
      () => settle(),
    )
    .catch(() => {});
};

const flush = (): void => {
  seal();
  send();
};

/**
 * The page is hidden or left: move every waiting event into `out` (persisted) and hand the batches
 * to sendBeacon. They stay in `out`: a page that lives on sends them again by fetch when it is shown,
 * the next page of the tab sends them after a reload; the batch_id makes the server store them once.
 */
const hide = (from?: number): void => {
  if (dead) return;
  seal();
  if (ready) for (const b of out.slice(from)) b != inflight && N.sendBeacon(base + "i/events", wire(b));
};

const push = (name: string, props: Props, at?: Partial<Ev>): void => {
  if (!startup || dead) return;
  const v = visit(1);
  const ev: Ev = {
    name,
    props,
    ts: v.l,
    visitor_id: visitor,
    session_id: v.i,
    url: cut(loc.href, 2000),
    path: cut(loc.pathname, 2000),
    referrer: cut(D.referrer, 2000),
    title: cut(D.title, 500),
    screen: screen.width | 0,
    language: N.language.replace(/-.*/, ""),
    ...at,
  };
  if (Object.keys(v.u).length) ev.utm = v.u;
  if (!ready) {
    if (queue.push(ev) > 100) queue.shift(), dropped++;
  } else if (buf.push(ev) > 19) flush();
  else flushTimer ||= setTimeout(safe(flush), 3e3);
};

const pageview = safe((force?: unknown): void => {
  const page = loc.pathname + loc.search;
  if (force || page != lastPage) (lastPage = page), push("pageview", {});
});

const load = (name: string): Promise<Plugin | void> =>
  (plugins[name] ||= new Promise<Plugin | void>((resolve) => {
    const tag = D.createElement("script");
    registrations[name] = safe((factory: PluginFactory) => resolve(factory(host)));
    tag.src = base + "analytics-" + name + ".js";
    tag.onload = tag.onerror = () => resolve();
    D.head.append(tag);
  }).catch(() => undefined));

const applyConfig = (c: Config): void => {
  host.config_ = c;
  if (c.events != "ready") return halt(c.events == "disabled" ? "disabled" : "error");
  if (c.cookieless) {
    keep = 0;
    safe(() => [VISITOR, VISIT, outKey].map((k) => (W[L].removeItem(k), W[S].removeItem(k))))();
    if (!named) {
      visitor = "-";
      for (const e of queue) e.visitor_id = visitor;
    }
  } else (keep = 1), store(L, VISITOR, visitor), store(L, VISIT, memVisit), saveOut();
  const rec = c.recording;
  states("ready", c.feedback === true && !privacy() ? "ready" : "disabled");
  // The visit's draw (0..1) is stable for the whole visit: it is in the sample or not.
  if (rec?.enabled && !privacy() && visit().r < rec.sample_rate) {
    st.recording = "loading";
    load("recording").then((p) => p || host.set_("recording", "error"));
  }
  ready = 1;
  flush();
  load("capture");
};

const fetchConfig = (resolve: (s: Status) => void): void => {
  const retry = (retryAfter?: string | null): void => {
    states("error");
    setTimeout(safe(() => fetchConfig(resolve)), backoff(retryAfter));
  };
  // Keys are URL-safe (token_urlsafe); a mistyped one is refused whatever it holds.
  fetch(base + "i/config?key=" + key, { credentials: "omit" })
    .then((r) =>
      busy(r)
        ? retry(r.headers.get("retry-after"))
        : r
            .json()
            .catch(() => ({}))
            .then((j) => {
              attempt = 0;
              r.ok ? applyConfig(j) : refused(j);
            }),
    )
    .catch(() => retry())
    .then(() => resolve(analytics.status()));
};

const boot = (resolve: (s: Status) => void): void => {
  states("loading", "loading", "loading");
  const stored = store(L, VISITOR);
  keep = +!!stored; // a code stored earlier: the site was not cookieless
  visitor = typeof stored == "string" && stored && stored.length <= 200 ? stored : rid();
  store(L, VISITOR, visitor);
  const saved = store(S, outKey);
  out = Array.isArray(saved) ? saved.filter((b) => b?.key == key && Array.isArray(b.events) && b.events.length) : [];
  for (const ev of ["pagehide", "visibilitychange"])
    addEventListener(ev, safe(() => (ev == "pagehide" || D.visibilityState == "hidden" ? hide() : send())), true);
  if (autoPageviews) {
    // pushState/replaceState return nothing; a failing call throws before the pageview.
    for (const method of ["pushState", "replaceState"] as const) {
      const original = history[method];
      history[method] = (...args: Parameters<History["pushState"]>) => {
        original.apply(history, args);
        pageview();
      };
    }
    // Back/forward in the page; a page shown again from the back/forward cache counts again
    // (`persisted`), the first showing of the page is the pageview just below.
    for (const ev of ["popstate", "pageshow"]) addEventListener(ev, (e) => pageview((e as PageTransitionEvent).persisted));
    pageview();
  }
  if (!key || !base) halt("error");
  // A browser the owner excluded with the console's link stays disabled. The link's parameter
  // (?sightline=exclude / include) is rare: the `exclude` plugin sets or removes the mark first.
  const go = (): void => {
    if (store(L, "sightline_ignore")) halt("disabled");
    dead ? resolve(analytics.status()) : fetchConfig(resolve);
  };
  /[?&]sightline=/.test(loc.search) && !dead ? load("exclude").then(go) : go();
};

const host: Host = {
  key_: key,
  base_: base,
  config_: {} as Config, // the server's answer, set before any plugin loads
  context_: context,
  privacy_: privacy,
  load_: load,
  event_: push,
  flush_: () => hide(out.length),
  set_: (connection, state) => {
    if (startup && !dead) st[connection] = state;
  },
  recording_: (id) => {
    recordingId = id;
  },
};

const analytics: Core = {
  // The checks run (and may throw) before the call they are arguments of: only `push` is contained.
  event(name, props) {
    safe(push)(checkName(name), checkProps(props));
  },
  identify(id) {
    id = checkId(id);
    if (startup && !dead) store(L, VISITOR, (visitor = id)), (named = 1);
  },
  start() {
    if (!startup) {
      let resolve!: (s: Status) => void;
      startup = new Promise<Status>((r) => (resolve = r));
      try {
        boot(resolve);
      } catch {
        halt("error");
        resolve(analytics.status());
      }
    }
    return startup;
  },
  status: () => ({ ...st }),
  getVisitorId: () => (startup && visitor != "-" ? visitor : undefined),
  getSessionContext: context,
  // Resolves a boolean, never rejects; the survey plugin checks the id (a non-empty string or number).
  feedback: (surveyId) =>
    Promise.resolve(
      startup &&
        !privacy() &&
        startup
          .then<Plugin | void | false>(() => st.feedback == "ready" && load("survey"))
          .then((p): unknown => p && p.open_?.(surveyId)),
    ).then(
      (shown: unknown) => shown === true,
      () => false,
    ),
  get dropped() {
    return dropped;
  },
  _register(name, factory) {
    registrations[name]?.(factory);
  },
};

if (!(W.analytics as Core | undefined)?._register) {
  W.analytics = analytics;
  if (data.consent != "required") analytics.start();
}
