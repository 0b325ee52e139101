// The Imports section of a site's settings (owner and admins): upload Plausible's CSV export (its
// zip), Umami's events CSV, Matomo's reports (a zip) or a CSV of daily figures, watch the import
// run, and list or delete the site's imports.
// Imported figures show in the reports beside the collected ones (docs/imports.md).
import { useEffect, useState } from "preact/hooks";

import { messageOf, request, upload } from "../api";
import { Notice } from "../components/Notice";
import { bytes, count, dateTime } from "../format";
import { useResource } from "../hooks";
import type { SettingsProps } from "../settings/registry";

export interface Import {
  id: number;
  site_id: number;
  kind: Kind;
  filename: string;
  status: "queued" | "running" | "done" | "failed";
  progress: number;
  rows: number;
  size_bytes: number;
  from: string | null;
  to: string | null;
  tables: string[];
  error: { code: string; message: string; field?: string } | null;
  created_at: string;
  finished_at: string | null;
  duplicate?: boolean;
}

const importsOf = (siteId: number) =>
  request<{ imports: Import[] }>("GET", `/api/sites/${siteId}/imports`).then((r) => r.imports);

type Kind = "plausible" | "umami" | "matomo" | "daily";
const KIND: Record<Kind, string> = {
  plausible: "Plausible export",
  umami: "Umami events",
  matomo: "Matomo reports",
  daily: "Daily figures",
};
// What to upload from each tool, one sentence each (docs/imports.md has the steps).
const SOURCES: { kind: Kind; name: string; file: string }[] = [
  {
    kind: "plausible",
    name: "Plausible",
    file: "the zip from Site settings, Imports & Exports, Export to CSV (imported_*.csv files).",
  },
  {
    kind: "umami",
    name: "Umami",
    file: "one CSV of the website_event table joined with session, as the query in the guide writes it.",
  },
  {
    kind: "matomo",
    name: "Matomo",
    file: "a zip of its Reporting API's CSV files with period=day, each named after its report (VisitsSummary.get.csv, Actions.get.csv, ...).",
  },
  {
    kind: "daily",
    name: "Daily figures",
    file: "a CSV with date, visitors, visits, pageviews and optionally bounces and visit_duration.",
  },
];
const STATUS = { queued: "Waiting to start", running: "Importing", done: "Imported", failed: "Failed" };

function contentType(file: File): string {
  if (file.name.toLowerCase().endsWith(".zip")) return "application/zip";
  if (/\.(csv|tsv)$/i.test(file.name)) return "text/csv";
  return "application/octet-stream";
}

export function ImportsPanel({ site }: SettingsProps) {
  const siteId = site.id;
  const imports = useResource(() => importsOf(siteId));
  const [message, setMessage] = useState<{ kind: "error" | "success"; text: string } | null>(null);
  const [sent, setSent] = useState<number | null>(null);
  const [file, setFile] = useState<File | null>(null);
  // None chosen: the server tells the kind from the file itself.
  const [kind, setKind] = useState<Kind | null>(null);
  const running = (imports.data ?? []).some((i) => i.status === "queued" || i.status === "running");

  // While an import runs, its progress is asked for every second.
  useEffect(() => {
    if (!running) return undefined;
    const timer = window.setInterval(() => void imports.reload(), 1000);
    return () => window.clearInterval(timer);
  }, [running]);

  const start = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    setMessage(null);
    if (!file) {
      const which = SOURCES.find((s) => s.kind === kind);
      setMessage({ kind: "error", text: `Choose a file first: ${which ? which.file : "one of the files said above."}` });
      return;
    }
    setSent(0);
    try {
      const path = `/api/sites/${siteId}/imports?filename=${encodeURIComponent(file.name)}${kind ? `&kind=${kind}` : ""}`;
      const made = await upload<Import>(path, file, contentType(file), setSent);
      setMessage(
        made.duplicate
          ? { kind: "success", text: `${file.name} was imported before (import ${made.id}); nothing was added twice.` }
          : { kind: "success", text: `${file.name} is checked and being imported; its progress shows below.` },
      );
      form.reset();
      setFile(null);
      await imports.reload();
    } catch (failure) {
      setMessage({ kind: "error", text: messageOf(failure) });
    }
    setSent(null);
  };

  const remove = async (item: Import) => {
    setMessage(null);
    try {
      await request<void>("DELETE", `/api/imports/${item.id}`);
      setMessage({ kind: "success", text: `Import ${item.id} (${item.filename}) and its figures were deleted.` });
      await imports.reload();
    } catch (failure) {
      setMessage({ kind: "error", text: messageOf(failure) });
    }
  };

  return (
    <section class="panel" aria-labelledby="imports-title">
      <h2 id="imports-title">Imports</h2>
      <p class="muted">
        Bring this site's history from before Sightline, from Plausible, Umami or Matomo, or as a CSV of daily figures.
        Imported figures show in the reports beside the collected ones, marked as imported.
      </p>
      {message && <Notice kind={message.kind}>{message.text}</Notice>}
      <form class="import-new" onSubmit={start} noValidate>
        <fieldset class="choice-group import-kind">
          <legend>Where the file comes from (if none is chosen, the file tells)</legend>
          {SOURCES.map((source) => (
            <label key={source.kind} class="choice">
              <input
                type="radio"
                name="import-kind"
                value={source.kind}
                checked={kind === source.kind}
                onChange={() => setKind(source.kind)}
              />
              <span>
                <strong>{source.name}</strong>: {source.file}
              </span>
            </label>
          ))}
        </fieldset>
        <div class="field">
          <label for="import-file">File to import</label>
          <p class="field-hint" id="import-file-hint">
            A .zip or a .csv as said above; the same file twice is imported once.
          </p>
          <input
            id="import-file"
            name="file"
            type="file"
            accept=".zip,.csv,.tsv,application/zip,text/csv"
            aria-describedby="import-file-hint"
            onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)}
          />
        </div>
        <button type="submit" class="button button-primary" disabled={sent !== null}>
          {sent === null ? "Import" : sent < 1 ? "Sending…" : "Checking every row…"}
        </button>
        {sent !== null && (
          <progress class="import-progress" max={1} value={sent} aria-label="File sent">
            {Math.round(sent * 100)} %
          </progress>
        )}
      </form>
      <h3>Imports of {site.name}</h3>
      {imports.error && <Notice kind="error">{imports.error}</Notice>}
      {imports.data && imports.data.length === 0 && <p class="muted">Nothing imported yet.</p>}
      {imports.data && imports.data.length > 0 && (
        <ul class="share-list import-list">
          {imports.data.map((item) => (
            <li key={item.id} class="share-row" data-import={item.id} data-status={item.status}>
              <p class="import-name">
                <strong>{item.filename}</strong> <span class="muted">({KIND[item.kind]}, {bytes(item.size_bytes)})</span>
              </p>
              <p class="muted">
                {item.from && item.to ? `Days ${item.from} to ${item.to}` : "Days not known yet"} · {count(item.rows)} rows ·
                uploaded {dateTime(item.created_at)}
              </p>
              <p role="status">
                {STATUS[item.status]}
                {(item.status === "running" || item.status === "queued") && ` (${Math.round(item.progress * 100)} %)`}
              </p>
              {(item.status === "running" || item.status === "queued") && (
                <progress class="import-progress" max={1} value={item.progress} aria-label={`Import ${item.id} progress`} />
              )}
              {item.error && <Notice kind="error">{item.error.message}</Notice>}
              <div class="share-actions">
                <button type="button" class="button button-quiet" onClick={() => remove(item)}>
                  Delete<span class="visually-hidden"> the import of {item.filename}</span>
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
