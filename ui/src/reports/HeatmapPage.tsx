// One page's click heatmap (docs/console.md, "Click heatmaps"): the page as the newest recording
// shows it (rebuilt by rrweb's replayer in its sandboxed iframe, masked as recordings are), the
// clicks drawn over it as dots where they landed in each element, a switch between window widths,
// and the clicked elements as a table (all rows one click away). Served with the replay's CSP
// (web/player.py), so the dashboard links here with a full page load.
import { Replayer } from "@rrweb/replay";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { useLocation, useRoute } from "preact-iso/router";

import { api, ApiError, messageOf } from "../api";
import { Notice } from "../components/Notice";
import { Page } from "../components/Page";
import { article, count, dateTime } from "../format";
import { useResource } from "../hooks";
import { type PageSnapshot, recordingsApi } from "../recordings/api";
import {
  downloads,
  HEAT_VIEWPORTS,
  parseQuery,
  queryParams,
  reports,
  type Breakdown,
  type HeatSpot,
  type HeatViewport,
  type ReportQuery,
  type Row,
} from "./api";
import { BreakdownDetails } from "./BreakdownDetails";

const WIDTHS: Record<HeatViewport, string> = { desktop: "Desktop", tablet: "Tablet", phone: "Phone" };
const WIDTH_RULES: Record<HeatViewport, string> = {
  desktop: "windows 992 px wide and wider",
  tablet: "windows 576 to 991 px wide",
  phone: "windows narrower than 576 px",
};
const MAX_PAGE_HEIGHT = 20000;

/** The dashboard's period as the subtitle names it. */
function periodText(query: ReportQuery): string {
  if (query.range === "today") return "today";
  if (query.range === "30d") return "the last 30 days";
  if (query.range === "yesterday") return "yesterday";
  if (query.range === "month") return "this month";
  if (query.range === "last_month") return "last month";
  if (query.range === "12mo") return "the last 12 months";
  if (query.range === "all") return "all time";
  if (query.range === "custom" && query.from && query.to) return `${query.from} to ${query.to}`;
  return "the last 7 days";
}

/** The replay needs the CSP its address is served with; a client-side visit here reloads the page. */
function loadedHere(): boolean {
  const entry = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming | undefined;
  try {
    return !entry || /^\/sites\/[^/]+\/heatmap$/.test(new URL(entry.name).pathname);
  } catch {
    return true;
  }
}

export function HeatmapPage() {
  const { params } = useRoute();
  const location = useLocation();
  const siteId = Number(params.id);
  const search = new URLSearchParams(location.url.split("?")[1] ?? "");
  const path = search.get("path") ?? "";
  const asked = search.get("viewport");
  const viewport: HeatViewport = HEAT_VIEWPORTS.includes(asked as HeatViewport) ? (asked as HeatViewport) : "desktop";
  const query = useMemo(() => parseQuery(location.url.split("?")[1] ?? ""), [location.url]);
  const key = JSON.stringify([query, path, viewport]);
  const [reloading] = useState(() => !loadedHere());
  useEffect(() => {
    if (reloading) window.location.reload();
  }, [reloading]);

  const choose = (next: HeatViewport) => {
    const again = queryParams({ ...query, compare: false });
    again.set("path", path);
    again.set("viewport", next);
    location.route(`/sites/${siteId}/heatmap?${again}`, true);
  };
  const back = `/sites/${siteId}/reports?${queryParams(query)}`;
  const site = useResource(() => api.site(siteId));
  if (reloading) return <p class="loading">Loading the heatmap…</p>;
  return (
    <Page
      title="Click heatmap"
      back={{ href: back, label: `Reports: ${site.data?.name ?? "…"}` }}
      subtitle={
        path && (
          <>
            <code class="heatmap-path">{path}</code> · {periodText(query)}
            {Object.keys(query.filters).length > 0 ? " (filtered as the dashboard)" : ""}
          </>
        )
      }
    >
      {!path.startsWith("/") ? (
        <Notice kind="error">This address names no page. Open a heatmap from the Click heatmaps panel of the reports.</Notice>
      ) : (
        <HeatmapView key={key} siteId={siteId} query={query} path={path} viewport={viewport} onViewport={choose} />
      )}
    </Page>
  );
}

interface ViewProps {
  siteId: number;
  query: ReportQuery;
  path: string;
  viewport: HeatViewport;
  onViewport: (viewport: HeatViewport) => void;
}

function HeatmapView({ siteId, query, path, viewport, onViewport }: ViewProps) {
  const heat = useResource(() => reports.heatmap(siteId, query, path, viewport));
  const shot = useResource(() => recordingsApi.snapshot(siteId, path, viewport));
  // Which clicked elements the snapshot shows (filled in once it is drawn).
  const [placed, setPlaced] = useState<Set<string> | null>(null);
  const data = heat.data;
  return (
    <>
      <div class="heatmap-controls">
        <div class="segmented" role="group" aria-label="Window width">
          {HEAT_VIEWPORTS.map((v) => (
            <button key={v} type="button" aria-pressed={v === viewport} onClick={() => onViewport(v)} title={`Clicks in ${WIDTH_RULES[v]}`}>
              {WIDTHS[v]}
              {data && <span class="heatmap-count"> {count(data.viewports[v])}</span>}
            </button>
          ))}
        </div>
        {data && (
          <p class="heatmap-total" role="status">
            {count(data.clicks)} {data.clicks === 1 ? "click" : "clicks"} in {WIDTH_RULES[viewport]}
            {data.more ? ` (the ${count(data.spots.length)} most clicked spots drawn)` : ""}
          </p>
        )}
      </div>
      {heat.error && <Notice kind="error">The clicks could not be loaded: {heat.error}</Notice>}
      {shot.error && <Notice kind="error">The page's recording could not be loaded: {shot.error}</Notice>}
      {!shot.data && !shot.error && <p class="loading">Loading the page's recording…</p>}
      {shot.data && !shot.data.snapshot && <NoSnapshot siteId={siteId} enabled={shot.data.recording_enabled} path={path} />}
      {shot.data?.snapshot && shot.data.snapshot.viewport !== viewport && (
        <Notice kind="info">
          No recording of {path} in a {WIDTHS[viewport].toLowerCase()} window yet: the page is shown as recorded in{" "}
          {article(shot.data.snapshot.width)} {shot.data.snapshot.width} px wide window, so dots may sit away from where {WIDTHS[viewport].toLowerCase()} visitors saw
          the elements.
        </Notice>
      )}
      {shot.data?.snapshot && data && (
        <Overlay snapshot={shot.data.snapshot} spots={data.spots} onPlaced={setPlaced} />
      )}
      {data && data.clicks === 0 && (
        <p class="report-empty">
          No clicks on {path} in {WIDTH_RULES[viewport]} in this period. Clicks are recorded when heatmaps are on (the site's
          settings, Autocapture).
        </p>
      )}
      <Elements siteId={siteId} query={query} path={path} viewport={viewport} placed={shot.data?.snapshot ? placed : null} />
    </>
  );
}

function NoSnapshot({ siteId, enabled, path }: { siteId: number; enabled: boolean; path: string }) {
  return (
    <Notice kind="info">
      {enabled ? (
        <>
          No recording of {path} yet, so the page cannot be drawn behind its clicks. Recordings are on for this site: the
          heatmap shows the page once a visit to it is recorded (visits are sampled, and visitors with Do-Not-Track are never
          recorded). The clicked elements are listed below.
        </>
      ) : (
        <>
          No recording shows {path}: recordings are off for this site. <a href={`/sites/${siteId}/settings`}>Turn recordings on</a>{" "}
          in the site's settings, and the heatmap draws the clicks over the page once a visit to it is recorded. The clicked
          elements are listed below.
        </>
      )}
    </Notice>
  );
}

interface Dot {
  spot: HeatSpot;
  left: number;
  top: number;
}

/** Where each spot lies on the rebuilt page (page pixels), and which selectors the page shows. */
function locate(doc: Document, spots: HeatSpot[]): { dots: Dot[]; found: Set<string> } {
  const boxes = new Map<string, DOMRect | null>();
  const dots: Dot[] = [];
  const scrollX = doc.defaultView?.scrollX ?? 0;
  const scrollY = doc.defaultView?.scrollY ?? 0;
  for (const spot of spots) {
    if (!boxes.has(spot.selector)) {
      let box: DOMRect | null = null;
      try {
        const element = doc.querySelector(spot.selector);
        const rect = element?.getBoundingClientRect();
        if (rect && (rect.width > 0 || rect.height > 0)) box = rect;
      } catch {
        box = null; // a selector this browser cannot read
      }
      boxes.set(spot.selector, box);
    }
    const box = boxes.get(spot.selector);
    if (!box) continue;
    dots.push({ spot, left: box.left + scrollX + spot.x * box.width, top: box.top + scrollY + spot.y * box.height });
  }
  const found = new Set<string>();
  for (const [selector, box] of boxes) if (box) found.add(selector);
  return { dots, found };
}

interface OverlayProps {
  snapshot: PageSnapshot;
  spots: HeatSpot[];
  onPlaced: (found: Set<string>) => void;
}

/** The recorded page, scaled to the panel's width, with a dot per clicked spot. */
function Overlay({ snapshot, spots, onPlaced }: OverlayProps) {
  const frame = useRef<HTMLDivElement>(null);
  const stage = useRef<HTMLDivElement>(null);
  const [layout, setLayout] = useState<{ scale: number; height: number; dots: Dot[] } | null>(null);
  const [failed, setFailed] = useState<string | null>(null);

  useEffect(() => {
    const root = stage.current;
    const outer = frame.current;
    if (!root || !outer) return;
    // A picture of the page, not something to interact with: out of the focus order.
    root.setAttribute("inert", "");
    let alive = true;
    let replayer: Replayer | null = null;
    const timers: number[] = [];
    const measure = () => {
      const doc = replayer?.iframe.contentDocument;
      if (!alive || !replayer || !doc?.documentElement) return;
      const height = Math.min(MAX_PAGE_HEIGHT, Math.max(snapshot.height, doc.documentElement.scrollHeight));
      replayer.iframe.setAttribute("height", String(height));
      const scale = Math.min(1, outer.clientWidth / snapshot.width);
      const { dots, found } = locate(doc, spots);
      setLayout({ scale, height, dots });
      onPlaced(found);
    };
    try {
      replayer = new Replayer(snapshot.events as any, {
        root,
        mouseTail: false,
        showWarning: false,
        triggerFocus: false,
        UNSAFE_replayCanvas: false,
        skipInactive: false,
      });
      replayer.iframe.title = "The page as recorded";
      replayer.iframe.tabIndex = -1;
      replayer.on("fullsnapshot-rebuilded", () => {
        replayer?.iframe.setAttribute("scrolling", "no");
        root.dataset.state = "ready";
        measure();
        // Images and fonts may still move things: measure again as the page settles.
        for (const wait of [300, 1000, 2500]) timers.push(window.setTimeout(measure, wait));
      });
    } catch (error) {
      setFailed(messageOf(error));
    }
    const resized = () => measure();
    window.addEventListener("resize", resized);
    return () => {
      alive = false;
      window.removeEventListener("resize", resized);
      for (const timer of timers) window.clearTimeout(timer);
      replayer?.destroy();
    };
  }, [snapshot, spots]);

  const most = Math.max(1, ...spots.map((s) => s.clicks));
  const scale = layout?.scale ?? Math.min(1, (frame.current?.clientWidth ?? snapshot.width) / snapshot.width);
  const height = layout?.height ?? snapshot.height;
  if (failed) return <Notice kind="error">The page's recording could not be drawn: {failed}</Notice>;
  return (
    <section class="panel heatmap-panel" aria-labelledby="heatmap-snapshot-title">
      <h2 id="heatmap-snapshot-title" class="visually-hidden">
        The page with its clicks
      </h2>
      <p class="heatmap-source">
        The page as recorded on {dateTime(snapshot.recorded_at)} in {article(snapshot.width)} {snapshot.width} px wide window (text masked as in
        recordings).
      </p>
      {/* Scrolls when the page is taller than the screen: focusable, so the keyboard scrolls it too. */}
      <div class="heatmap-frame" ref={frame} tabIndex={0} role="region" aria-label="The recorded page with its clicks">
        <div class="heatmap-canvas" style={{ width: `${snapshot.width * scale}px`, height: `${height * scale}px` }}>
          <div
            class="heatmap-stage"
            ref={stage}
            style={{ width: `${snapshot.width}px`, height: `${height}px`, transform: `scale(${scale})` }}
          />
          <div class="heatmap-dots" aria-hidden="true">
            {layout &&
              layout.dots.map(({ spot, left, top }, i) => {
              const size = 14 + 22 * Math.sqrt(spot.clicks / most);
              return (
                <span
                  key={i}
                  class="heat-dot"
                  data-selector={spot.selector}
                  data-x={spot.x}
                  data-y={spot.y}
                  data-clicks={spot.clicks}
                  title={`${count(spot.clicks)} ${spot.clicks === 1 ? "click" : "clicks"} on ${spot.selector}`}
                  style={{
                    left: `${left * layout.scale}px`,
                    top: `${top * layout.scale}px`,
                    width: `${size}px`,
                    height: `${size}px`,
                    opacity: String(0.45 + 0.5 * (spot.clicks / most)),
                  }}
                >
                  {spot.clicks > 1 ? count(spot.clicks) : ""}
                </span>
              );
            })}
          </div>
        </div>
      </div>
      {layout && <DrawnNote drawn={layout.dots.reduce((n, d) => n + d.spot.clicks, 0)} all={spots.reduce((n, s) => n + s.clicks, 0)} />}
    </section>
  );
}

function DrawnNote({ drawn, all }: { drawn: number; all: number }) {
  if (all === 0) return null;
  return (
    <p class="heatmap-note">
      {drawn === all
        ? `All ${count(all)} ${all === 1 ? "click" : "clicks"} drawn.`
        : `${count(drawn)} of ${count(all)} clicks drawn; the rest landed on elements this recording does not show (see the table).`}
    </p>
  );
}

interface ElementsProps {
  siteId: number;
  query: ReportQuery;
  path: string;
  viewport: HeatViewport;
  /** The selectors the drawn snapshot shows; null when no snapshot is drawn. */
  placed: Set<string> | null;
}

/** The clicked elements of the page: the top 10, every row in Details, and a CSV. */
function Elements({ siteId, query, path, viewport, placed }: ElementsProps) {
  const [data, setData] = useState<Breakdown | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [details, setDetails] = useState(false);
  useEffect(() => {
    let alive = true;
    reports.breakdown(siteId, query, "clicked_elements", path, { limit: 10, viewport }).then(
      (result) => alive && setData(result),
      (failure) => {
        if (!alive || (failure instanceof ApiError && failure.status === 401)) return;
        setError(messageOf(failure));
      },
    );
    return () => {
      alive = false;
    };
  }, [siteId, JSON.stringify(query), path, viewport]);
  const title = `Clicked elements (${WIDTHS[viewport].toLowerCase()})`;
  return (
    <section class="panel report-panel" aria-labelledby="heatmap-elements-title">
      <div class="report-panel-head">
        <h2 id="heatmap-elements-title">{title}</h2>
      </div>
      {error && <p class="report-error" role="alert">The clicked elements could not be loaded: {error}</p>}
      {!data && !error && <p class="loading">Loading…</p>}
      {data && data.rows.length === 0 && <p class="report-empty">No clicked elements in this period.</p>}
      {data && data.rows.length > 0 && <ElementTable rows={data.rows} placed={placed} caption={title} />}
      {data && data.rows.length > 0 && (
        <div class="report-more">
          <button type="button" class="button button-quiet" aria-label="Details: all clicked elements" onClick={() => setDetails(true)}>
            Details
          </button>
          <a class="button button-quiet" href={downloads.breakdown(siteId, query, "clicked_elements", path, viewport)} download>
            CSV<span class="visually-hidden">: download the clicked elements (top 100)</span>
          </a>
          {data.more && <span class="report-more-note">Top {data.rows.length} shown</span>}
        </div>
      )}
      {details && (
        <BreakdownDetails
          title={title}
          siteId={siteId}
          query={query}
          dimension="clicked_elements"
          name={path}
          viewport={viewport}
          onClose={() => setDetails(false)}
          render={(rows) => <ElementTable rows={rows} placed={placed} caption={title} />}
        />
      )}
    </section>
  );
}

function ElementTable({ rows, placed, caption }: { rows: Row[]; placed: Set<string> | null; caption: string }) {
  return (
    <table class="report-table heatmap-elements" data-dimension="clicked_elements">
      <caption class="visually-hidden">{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Element</th>
          <th scope="col" class="num">Clicks</th>
          <th scope="col" class="num">Visitors</th>
          {placed && <th scope="col">On the page shown</th>}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.value}>
            <th scope="row" class="report-value">
              <code class="heatmap-selector">{row.value}</code>
            </th>
            <td class="num">{count(row.clicks ?? 0)}</td>
            <td class="num">{count(row.visitors ?? 0)}</td>
            {placed && <td>{placed.has(row.value) ? "Yes" : "No"}</td>}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
