// /sites/:id/realtime: who is on the site now. Refreshes itself every 10 seconds while visible.
import { useRoute } from "preact-iso/router";
import { useCallback, useEffect, useState } from "preact/hooks";

import { api, messageOf } from "../api";
import { Notice } from "../components/Notice";
import { Page } from "../components/Page";
import { count } from "../format";
import { useAutoRefresh, useResource } from "../hooks";
import { reports, type Breakdown, type Realtime, type ReportQuery, type Row } from "./api";
import { BreakdownDetails } from "./BreakdownDetails";
import { label } from "./Breakdown";
import { MinuteChart } from "./MinuteChart";

export const REFRESH_MS = 10_000;
const time = new Intl.DateTimeFormat(undefined, { hour: "numeric", minute: "2-digit", second: "2-digit" });

export function RealtimePage() {
  const { params } = useRoute();
  return <Live key={params.id} siteId={Number(params.id)} />;
}

const TODAY: ReportQuery = { range: "today", compare: false, imported: false, filters: {} };

/** Today's sources with their visits, each bar a share of the top source's. */
function SourcesTable({ rows, top, ...rest }: { rows: Row[]; top: number; "data-dimension"?: string }) {
  return (
    <table class="report-table" {...rest}>
      <caption class="visually-hidden">Sources of today's visits</caption>
      <thead>
        <tr>
          <th scope="col">Source</th>
          <th scope="col" class="num">
            Visits
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.value}>
            <th scope="row" class="report-value">
              <span class="report-bar" style={{ width: `${(((row.visits ?? 0) / Math.max(1, top)) * 100).toFixed(1)}%` }} aria-hidden="true" />
              <span>{label("source", row.value)}</span>
            </th>
            <td class="num">{count(row.visits ?? 0)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Live({ siteId }: { siteId: number }) {
  const site = useResource(() => api.site(siteId));
  const [now, setNow] = useState<Realtime | null>(null);
  const [sources, setSources] = useState<Breakdown | null>(null);
  const [details, setDetails] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [updated, setUpdated] = useState<number | null>(null);

  const load = useCallback(async () => {
    try {
      const [live, today] = await Promise.all([
        reports.realtime(siteId),
        reports.breakdown(siteId, TODAY, "source"),
      ]);
      setNow(live);
      setSources(today);
      setUpdated(Date.now());
      setError(null);
    } catch (failure) {
      setError(`${messageOf(failure)} The figures below are from ${updated ? time.format(updated) : "no earlier update"}; Sightline tries again in 10 seconds.`);
    }
  }, [siteId, updated]);

  useEffect(() => {
    void load();
  }, [siteId]);
  useAutoRefresh(load, REFRESH_MS);

  const name = site.data?.name ?? "…";
  const top = Math.max(1, ...(now?.pages ?? []).map((p) => p.visitors));
  return (
    <Page title={`Realtime: ${name}`} back={{ href: `/sites/${siteId}/reports`, label: `Reports: ${name}` }}>
      {error && <Notice kind="error">{error}</Notice>}
      <section class="panel realtime-now" aria-labelledby="realtime-now-title">
        <h2 id="realtime-now-title" class="visually-hidden">
          Now
        </h2>
        <div class="realtime-figures">
          <p class="realtime-figure" role="status" aria-live="polite">
            <span class="realtime-value">{now ? count(now.visitors) : "–"}</span>
            <span class="realtime-label">
              {now?.visitors === 1 ? "visitor" : "visitors"} in the last {now ? Math.round(now.window_seconds / 60) : 5}{" "}
              minutes
            </span>
          </p>
          <p class="realtime-figure">
            <span class="realtime-value">{now ? count(now.pageviews) : "–"}</span>
            <span class="realtime-label">pageviews in the same minutes</span>
          </p>
        </div>
        {now && <MinuteChart minutes={now.minutes} />}
        <p class="realtime-updated">
          <span class="badge-dot realtime-dot" aria-hidden="true" /> Updates by itself every 10 seconds
          {updated ? ` · last at ${time.format(updated)}` : ""}
        </p>
      </section>
      <div class="report-grid">
        <section class="panel report-panel" aria-labelledby="realtime-pages-title">
          <h2 id="realtime-pages-title">Pages being viewed</h2>
          {now && now.pages.length === 0 && <p class="report-empty">Nobody is on the site right now.</p>}
          {now && now.pages.length > 0 && (
            <table class="report-table" data-dimension="realtime-pages">
              <caption class="visually-hidden">Pages viewed in the last 5 minutes</caption>
              <thead>
                <tr>
                  <th scope="col">Page</th>
                  <th scope="col" class="num">
                    Visitors
                  </th>
                </tr>
              </thead>
              <tbody>
                {now.pages.map((p) => (
                  <tr key={p.value}>
                    <th scope="row" class="report-value">
                      <span class="report-bar" style={{ width: `${((p.visitors / top) * 100).toFixed(1)}%` }} aria-hidden="true" />
                      <span>{p.value}</span>
                    </th>
                    <td class="num">{count(p.visitors)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
        <section class="panel report-panel" aria-labelledby="realtime-sources-title">
          <h2 id="realtime-sources-title">Sources today</h2>
          {sources && sources.rows.length === 0 && <p class="report-empty">No visits today yet.</p>}
          {sources && sources.rows.length > 0 && (
            <>
              <SourcesTable rows={sources.rows} top={sources.rows[0].visits ?? 1} data-dimension="realtime-sources" />
              <div class="report-more">
                <button type="button" class="button button-quiet" aria-label="Details: all of today's sources" onClick={() => setDetails(true)}>
                  Details
                </button>
                {sources.more && <span class="report-more-note">Top {sources.rows.length} shown</span>}
              </div>
            </>
          )}
          {details && (
            <BreakdownDetails
              title="Sources today"
              siteId={siteId}
              query={TODAY}
              dimension="source"
              onClose={() => setDetails(false)}
              render={(rows) => <SourcesTable rows={rows} top={sources?.rows[0]?.visits ?? 1} />}
            />
          )}
        </section>
      </div>
    </Page>
  );
}
