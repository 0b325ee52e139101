import { useLocation } from "preact-iso/router";
import { useState } from "preact/hooks";

import { api, messageOf } from "../api";
import { Dialog } from "../components/Dialog";
import type { SettingsProps } from "./registry";

/** Deleting the site, after typing its domain: it cannot be undone. */
export function DeletePanel({ site }: SettingsProps) {
  const { route } = useLocation();
  const [open, setOpen] = useState(false);
  const [typed, setTyped] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const matches = typed.trim().toLowerCase() === site.domain;

  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    if (!matches) {
      setError(`Type ${site.domain} to confirm.`);
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await api.deleteSite(site.id);
      setOpen(false);
      route(`/sites?deleted=${encodeURIComponent(site.name)}`);
    } catch (failure) {
      setError(messageOf(failure));
      setBusy(false);
    }
  };

  return (
    <section class="panel panel-danger" aria-labelledby="delete-title">
      <div class="panel-head">
        <h2 id="delete-title">Delete site</h2>
      </div>
      <p>
        Deletes {site.name} with all its events, reports, recordings, surveys and their responses. The
        snippet stops working at once. This cannot be undone.
      </p>
      <button
        type="button"
        class="button button-danger"
        onClick={() => {
          setTyped("");
          setError(null);
          setOpen(true);
        }}
      >
        Delete this site…
      </button>
      <Dialog open={open} title={`Delete ${site.name}?`} onClose={() => setOpen(false)}>
        <form class="dialog-body" onSubmit={submit} noValidate>
          <p>
            Everything Sightline stores about <strong>{site.domain}</strong> is deleted for good.
          </p>
          <div class={`field${error ? " field-invalid" : ""}`}>
            <label for="delete-confirm">Type the domain, {site.domain}, to confirm</label>
            <input
              id="delete-confirm"
              autoComplete="off"
              spellcheck={false}
              autoCapitalize="off"
              value={typed}
              aria-invalid={error ? "true" : undefined}
              aria-describedby={error ? "delete-confirm-error" : undefined}
              onInput={(event) => setTyped(event.currentTarget.value)}
            />
            {error && (
              <p class="field-error" id="delete-confirm-error">
                {error}
              </p>
            )}
          </div>
          <div class="dialog-actions">
            <button type="button" class="button" onClick={() => setOpen(false)}>
              Cancel
            </button>
            <button type="submit" class="button button-danger" disabled={busy || !matches}>
              Delete for good
            </button>
          </div>
        </form>
      </Dialog>
    </section>
  );
}
