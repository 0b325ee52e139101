import { useState } from "preact/hooks";

import { api, messageOf, type Erasure } from "../api";
import { Dialog } from "../components/Dialog";
import { Notice } from "../components/Notice";
import { useResource } from "../hooks";
import type { SettingsProps } from "./registry";

const when = (iso: string) => new Date(iso).toLocaleString();

/** A visitor's data rights: export everything about one visitor code, or erase it. */
export function VisitorsPanel({ site }: SettingsProps) {
  const [code, setCode] = useState("");
  const [codeError, setCodeError] = useState<string | null>(null);
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [nothing, setNothing] = useState<string | null>(null);
  const erasures = useResource(() => api.erasures(site.id));

  const valid = () => {
    const text = code.trim();
    if (!text || text.length > 200) {
      setCodeError("Enter the visitor code (1 to 200 characters), as the site's script reports it.");
      return null;
    }
    setCodeError(null);
    return text;
  };

  const exportData = async () => {
    const text = valid();
    if (!text) return;
    setError(null);
    setDone(null);
    setNothing(null);
    try {
      const data = await api.exportVisitor(site.id, text);
      if (data.events_total === 0 && data.recordings.length === 0 && data.survey_responses.length === 0) {
        setNothing(
          `Nothing is stored about the visitor code "${text}" on ${site.name}: no events, recordings or survey responses, so nothing was downloaded. Check the code as the visitor's browser reports it; a code that was erased has no data either.`,
        );
        return;
      }
      const blob = new Blob([JSON.stringify(data, null, 2)], { type: "application/json" });
      const anchor = document.createElement("a");
      anchor.href = URL.createObjectURL(blob);
      anchor.download = `visitor-${site.id}.json`;
      anchor.click();
      URL.revokeObjectURL(anchor.href);
      setDone("The visitor's data was downloaded as JSON.");
    } catch (failure) {
      setError(messageOf(failure));
    }
  };

  const erase = async (event: SubmitEvent) => {
    event.preventDefault();
    const text = valid();
    if (!text) return;
    setBusy(true);
    setError(null);
    setNothing(null);
    try {
      const erasure = await api.eraseVisitor(site.id, text);
      setOpen(false);
      setCode("");
      setDone(
        `Erased: ${erasure.events_removed} events, ${erasure.recordings_removed} recordings, ${erasure.responses_removed} survey responses.`,
      );
      void erasures.reload();
    } catch (failure) {
      setOpen(false);
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="panel" aria-labelledby="visitors-title">
      <div class="panel-head">
        <h2 id="visitors-title">A visitor's data</h2>
      </div>
      <p>
        For an access or erasure request: the visitor code is what the site's script reports as{" "}
        <code>analytics.getVisitorId()</code> on the visitor's browser, or the id your site gave with{" "}
        <code>identify()</code>.
      </p>
      <form class="inline-form" onSubmit={(event) => (event.preventDefault(), valid() && setOpen(true))} noValidate>
        <div class={`field${codeError ? " field-invalid" : ""}`}>
          <label for="visitor-code">Visitor code</label>
          <input
            id="visitor-code"
            autoComplete="off"
            spellcheck={false}
            value={code}
            maxLength={200}
            aria-invalid={codeError ? "true" : undefined}
            aria-describedby={codeError ? "visitor-code-error" : undefined}
            onInput={(event) => setCode(event.currentTarget.value)}
          />
          {codeError && (
            <p class="field-error" id="visitor-code-error">
              {codeError}
            </p>
          )}
        </div>
        <button type="button" class="button" onClick={() => void exportData()}>
          Export as JSON
        </button>
        <button type="submit" class="button button-danger">
          Erase…
        </button>
      </form>
      {error && <Notice kind="error">{error}</Notice>}
      {done && !error && <Notice kind="success">{done}</Notice>}
      {nothing && !error && <Notice kind="info">{nothing}</Notice>}
      <Dialog open={open} title="Erase this visitor?" onClose={() => setOpen(false)}>
        <form onSubmit={erase} noValidate>
          <p>
            Every event, recording and survey response of <strong>{code.trim()}</strong> on {site.name} is deleted
            for good, from reports too. The erasure is recorded without the code.
          </p>
          <div class="dialog-actions">
            <button type="button" class="button" onClick={() => setOpen(false)}>
              Cancel
            </button>
            <button type="submit" class="button button-danger" disabled={busy}>
              Erase for good
            </button>
          </div>
        </form>
      </Dialog>
      <h3 class="privacy-heading">Erasures</h3>
      {erasures.error ? (
        <Notice kind="error">
          {erasures.error}{" "}
          <button type="button" class="link-button" onClick={() => void erasures.reload()}>
            Try again
          </button>
        </Notice>
      ) : !erasures.data ? (
        <p class="loading">Loading erasures…</p>
      ) : erasures.data.length === 0 ? (
        <p>No visitor of this site has been erased.</p>
      ) : (
        <div class="table-scroll">
          <table class="privacy-table">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Events</th>
                <th scope="col">Recordings</th>
                <th scope="col">Responses</th>
                <th scope="col">Reports</th>
              </tr>
            </thead>
            <tbody>
              {erasures.data.map((item: Erasure) => (
                <tr key={item.id}>
                  <td>{when(item.created_at)}</td>
                  <td>{item.events_removed}</td>
                  <td>{item.recordings_removed}</td>
                  <td>{item.responses_removed}</td>
                  <td>{item.store === "done" ? "Removed" : "Being removed"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
