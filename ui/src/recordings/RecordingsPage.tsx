// The recordings of one site, newest first, 50 at a time. The player opens with a full page load
// (target="_top"): its address is served with the Content-Security-Policy the replay needs.
import { useEffect, useState } from "preact/hooks";

import { messageOf, type Site } from "../api";
import { Notice } from "../components/Notice";
import { Page } from "../components/Page";
import { SitePicker, useSiteChoice } from "../components/SitePicker";
import { bytes, count, dateTime, timeAgo } from "../format";
import { clientOf, length, PAGE_SIZE, type Recording, recordingsApi } from "./api";

export function RecordingsPage() {
  const { sites, site } = useSiteChoice();
  const list = sites.data ?? [];

  return (
    <Page title="Recordings" subtitle="Replays of visits, with every input and all text masked unless the site reveals it.">
      {sites.error && <Notice kind="error">{sites.error}</Notice>}
      {sites.loading && !sites.data && <p class="loading">Loading sites…</p>}
      {sites.data && list.length === 0 && (
        <div class="panel empty">
          <p>
            Add a site first, then switch recording on for it. <a href="/sites">Go to sites</a>
          </p>
        </div>
      )}
      {site && (
        <>
          {list.length > 1 && <SitePicker sites={list} current={site} path="/recordings" />}
          <SiteRecordings key={site.id} site={site} />
        </>
      )}
    </Page>
  );
}

function SiteRecordings({ site }: { site: Site }) {
  const [rows, setRows] = useState<Recording[]>([]);
  const [more, setMore] = useState(false);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | null>(null);

  const load = async (offset: number) => {
    setLoading(true);
    try {
      const page = await recordingsApi.list(site.id, offset);
      setRows((old) => (offset === 0 ? page : [...old, ...page]));
      setMore(page.length === PAGE_SIZE);
      setError(null);
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setLoading(false);
    }
  };
  useEffect(() => void load(0), [site.id]);

  return (
    <section class="panel recordings" aria-labelledby="recordings-title">
      <div class="panel-head">
        <h2 id="recordings-title">{site.name}</h2>
        <span class="recordings-setting">
          {site.recording_enabled
            ? `Recording ${Math.round(site.recording_sample_rate * 100)}% of visits`
            : "Recording is off for this site"}{" "}
          · <a href={`/sites/${site.id}/settings#collection`}>Settings</a>
        </span>
      </div>
      {error && <Notice kind="error">{error}</Notice>}
      {!loading && !error && rows.length === 0 && (
        <p class="recordings-empty">
          No recordings yet.{" "}
          {site.recording_enabled
            ? "They appear here a few seconds after a visit starts."
            : "Switch recording on in the site's settings."}
        </p>
      )}
      {rows.length > 0 && (
        <table class="recordings-table">
          <thead>
            <tr>
              <th scope="col">Started</th>
              <th scope="col">Duration</th>
              <th scope="col">Pages</th>
              <th scope="col">Entry page</th>
              <th scope="col">Browser</th>
              <th scope="col">Visitor</th>
              <th scope="col">Size</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.id} data-recording-id={r.id}>
                <td data-label="Started">
                  <a href={`/recordings/${encodeURIComponent(r.id)}`} target="_top" title={dateTime(r.started_at)}>
                    {timeAgo(r.started_at)}
                  </a>
                </td>
                <td data-label="Duration">{length(r.duration_ms)}</td>
                <td data-label="Pages">{count(r.pages)}</td>
                <td data-label="Entry page" class="recordings-entry">
                  {r.entry_page ?? "Unknown"}
                </td>
                <td data-label="Browser">{clientOf(r)}</td>
                <td data-label="Visitor" class="recordings-visitor">
                  {r.visitor_id}
                </td>
                <td data-label="Size">{bytes(r.size_bytes)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {loading && <p class="loading">Loading recordings…</p>}
      {more && !loading && (
        <button type="button" class="button" onClick={() => void load(rows.length)}>
          Show older recordings
        </button>
      )}
    </section>
  );
}
