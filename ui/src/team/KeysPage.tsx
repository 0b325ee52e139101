// API keys for the stats API (docs/stats-api.md): create (the key is shown once), list, revoke.
import { useState } from "preact/hooks";

import { ApiError, api, messageOf, type Site } from "../api";
import { CopyButton } from "../components/CopyButton";
import { Dialog } from "../components/Dialog";
import { Field } from "../components/Field";
import { Notice } from "../components/Notice";
import { Page } from "../components/Page";
import { dateTime, timeAgo } from "../format";
import { useResource } from "../hooks";
import { team, type ApiKey } from "./api";
import { TeamTabs } from "./TeamTabs";

export function KeysPage() {
  const keys = useResource(team.keys);
  const sites = useResource(api.sites);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<ApiKey | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const [message, setMessage] = useState<{ kind: "error" | "success"; text: string } | null>(null);

  const siteName = (id: number | null) =>
    id === null ? "Every site" : (sites.data?.find((s) => s.id === id)?.name ?? `Site ${id}`);

  const revoke = async (key: ApiKey) => {
    try {
      await team.revokeKey(key.id);
      setMessage({ kind: "success", text: `The key “${key.name}” was revoked; requests with it now get 401.` });
      setRevoking(null);
      await keys.reload();
    } catch (failure) {
      setRevoking(null);
      setMessage({ kind: "error", text: messageOf(failure) });
    }
  };

  return (
    <Page
      title="API keys"
      subtitle={
        <>
          Keys read the reports of the stats API (<code>GET /api/sites/ID/reports/…</code>) and nothing else.
        </>
      }
      actions={
        <button type="button" class="button button-primary" onClick={() => { setCreated(null); setCreating(true); }}>
          <span class="icon icon-plus" aria-hidden="true" />
          Create key
        </button>
      }
    >
      <TeamTabs current="keys" />
      {message && <Notice kind={message.kind}>{message.text}</Notice>}
      <section class="panel" aria-labelledby="keys-title">
        <h2 id="keys-title">Keys</h2>
        {keys.error && <Notice kind="error">{keys.error}</Notice>}
        {keys.loading && !keys.data && <p class="loading">Loading keys…</p>}
        {keys.data && keys.data.length === 0 && <p class="muted">No API key yet.</p>}
        {keys.data && keys.data.length > 0 && (
          <div class="table-scroll" tabIndex={0} role="region" aria-label="API keys, scrolls sideways on narrow screens">
            <table class="team-table">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Starts with</th>
                  <th scope="col">Reads</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col"><span class="visually-hidden">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                {keys.data.map((key) => (
                  <tr key={key.id} data-key={key.name}>
                    <th scope="row">{key.name}</th>
                    <td><code>{key.prefix}…</code></td>
                    <td>{siteName(key.site_id)}</td>
                    <td>{dateTime(key.created_at)}</td>
                    <td>
                      {key.last_used_at ? (
                        <time dateTime={key.last_used_at} title={dateTime(key.last_used_at)}>
                          {timeAgo(key.last_used_at)}
                        </time>
                      ) : (
                        "Never"
                      )}
                    </td>
                    <td class="actions">
                      <button type="button" class="button button-quiet" onClick={() => setRevoking(key)}>
                        Revoke<span class="visually-hidden"> the key {key.name}</span>
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <Dialog open={creating} title={created ? "Copy the key now" : "Create an API key"} onClose={() => setCreating(false)}>
        {created ? (
          <ShowKey created={created} onDone={() => setCreating(false)} />
        ) : (
          <CreateKeyForm
            sites={sites.data ?? []}
            onCancel={() => setCreating(false)}
            onCreated={(key) => {
              setCreated(key);
              void keys.reload();
            }}
          />
        )}
      </Dialog>
      <Dialog open={revoking !== null} title="Revoke this key?" onClose={() => setRevoking(null)}>
        {revoking && (
          <div class="dialog-body">
            <p>Scripts using “{revoking.name}” stop working at once. This cannot be undone.</p>
            <div class="dialog-actions">
              <button type="button" class="button" onClick={() => setRevoking(null)}>
                Cancel
              </button>
              <button type="button" class="button button-danger" onClick={() => revoke(revoking)}>
                Revoke key
              </button>
            </div>
          </div>
        )}
      </Dialog>
    </Page>
  );
}

function CreateKeyForm({
  sites,
  onCancel,
  onCreated,
}: {
  sites: Site[];
  onCancel: () => void;
  onCreated: (key: ApiKey) => void;
}) {
  const [busy, setBusy] = useState(false);
  const [errors, setErrors] = useState<{ name?: string; form?: string }>({});
  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const name = (form.elements.namedItem("name") as HTMLInputElement).value.trim();
    const scope = (form.elements.namedItem("site") as HTMLSelectElement).value;
    if (!name) {
      setErrors({ name: "Give the key a name that says where it is used." });
      form.querySelector<HTMLInputElement>("#key-name")?.focus();
      return;
    }
    setBusy(true);
    try {
      onCreated(await team.createKey(name, scope === "" ? null : Number(scope)));
    } catch (failure) {
      setBusy(false);
      if (failure instanceof ApiError && failure.field === "name") setErrors({ name: failure.message });
      else setErrors({ form: messageOf(failure) });
    }
  };
  return (
    <form class="dialog-body" onSubmit={submit} noValidate>
      <Field id="key-name" name="name" label="Name" hint="Where the key is used, e.g. “Monthly report script”." maxLength={100} required autoFocus error={errors.name} />
      <div class="field">
        <label for="key-site">Sites it reads</label>
        <select id="key-site" name="site">
          <option value="">Every site</option>
          {sites.map((site) => (
            <option key={site.id} value={String(site.id)}>
              Only {site.name} ({site.domain})
            </option>
          ))}
        </select>
      </div>
      {errors.form && <Notice kind="error">{errors.form}</Notice>}
      <div class="dialog-actions">
        <button type="button" class="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" class="button button-primary" disabled={busy}>
          {busy ? "Creating…" : "Create key"}
        </button>
      </div>
    </form>
  );
}

function ShowKey({ created, onDone }: { created: ApiKey; onDone: () => void }) {
  const key = created.key ?? "";
  return (
    <div class="dialog-body">
      <Notice kind="info">This is the only time the key is shown; Sightline keeps only a hash of it.</Notice>
      <pre class="snippet"><code id="new-key">{key}</code></pre>
      <CopyButton text={key} label="Copy key" target={() => document.getElementById("new-key")} />
      <p class="muted">
        Use it as <code>Authorization: Bearer {created.prefix}…</code> on <code>GET /api/sites/ID/reports/summary</code> and
        the other report endpoints.
      </p>
      <div class="dialog-actions">
        <button type="button" class="button button-primary" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}
