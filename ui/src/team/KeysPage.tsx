// API keys (docs/stats-api.md): create with scopes and a site (the key is shown once), list, revoke.
import { useState } from "preact/hooks";

import { ApiError, api, messageOf, type Site } from "../api";
import { formMessage } from "../formMessages";
import { CopyButton } from "../components/CopyButton";
import { Dialog } from "../components/Dialog";
import { Field } from "../components/Field";
import { Notice } from "../components/Notice";
import { Page } from "../components/Page";
import { dateTime, timeAgo } from "../format";
import { useResource } from "../hooks";
import { SCOPES, team, type ApiKey, type Scope } from "./api";
import { TeamTabs } from "./TeamTabs";

/** Each scope's name in the console and the sentence saying what it allows. */
const SCOPE_TEXT: Record<Scope, { label: string; allows: string }> = {
  "stats:read": { label: "Read reports", allows: "Read the figures of the reports (GET /api/sites/ID/reports/…), as the dashboard shows them." },
  "sites:read": { label: "Read sites", allows: "List the sites with their ids and read each site and its goals (GET /api/sites). Assistants need it to find the sites." },
  "sites:write": { label: "Provision sites", allows: "Create, change and delete sites and their goals. A key for one site may change that site only and create none." },
  "events:write": { label: "Send events", allows: "Send events from a backend, an app or an e-mail tool (POST /api/events). Needs a key for one site." },
};

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
          A key does what its scopes allow: read reports, read or provision sites, send events from a backend, and nothing else.
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
          <div class="table-scroll" tabIndex={0} role="region" aria-label="API keys">
            <table class="team-table card-table">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Starts with</th>
                  <th scope="col">Sites</th>
                  <th scope="col">May</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col"><span class="visually-hidden">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                {keys.data.map((key) => (
                  <tr key={key.id} data-key={key.name}>
                    <th scope="row">{key.name}</th>
                    <td data-label="Starts with"><code>{key.prefix}…</code></td>
                    <td data-label="Sites">{siteName(key.site_id)}</td>
                    <td data-label="May" data-scopes={key.scopes.join(" ")}>{key.scopes.map((scope) => SCOPE_TEXT[scope]?.label ?? scope).join(", ")}</td>
                    <td data-label="Created">{dateTime(key.created_at)}</td>
                    <td data-label="Last used">
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
  const [scopes, setScopes] = useState<Scope[]>(["stats:read"]);
  const [errors, setErrors] = useState<{ name?: string; scopes?: string; site?: string; form?: string }>({});
  const toggle = (scope: Scope) =>
    setScopes(scopes.includes(scope) ? scopes.filter((s) => s !== scope) : SCOPES.filter((s) => s === scope || scopes.includes(s)));
  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const name = (form.elements.namedItem("name") as HTMLInputElement).value.trim();
    const site = (form.elements.namedItem("site") as HTMLSelectElement).value;
    const found: typeof errors = {};
    if (!name) found.name = "Give the key a name that says where it is used.";
    if (scopes.length === 0) found.scopes = "Choose at least one thing the key may do.";
    if (scopes.includes("events:write") && site === "")
      found.site = "Events go to one site: choose the site this key sends events to.";
    if (Object.keys(found).length > 0) {
      setErrors(found);
      const first = found.name ? "#key-name" : found.scopes ? "#key-scope-stats-read" : "#key-site";
      form.querySelector<HTMLElement>(first)?.focus();
      return;
    }
    setBusy(true);
    try {
      onCreated(await team.createKey(name, site === "" ? null : Number(site), scopes));
    } catch (failure) {
      setBusy(false);
      const field = failure instanceof ApiError ? failure.field : undefined;
      if (field === "name" || field === "scopes") setErrors({ [field]: formMessage("key", failure) });
      else if (field === "site_id") setErrors({ site: formMessage("key", failure) });
      else setErrors({ form: formMessage("key", failure) });
    }
  };
  return (
    <form class="dialog-body" onSubmit={submit} noValidate>
      <Field id="key-name" name="name" label="Name" hint="Where the key is used, e.g. “Monthly report script”." maxLength={100} required autoFocus error={errors.name} />
      <fieldset class="choice-group" aria-describedby={errors.scopes ? "key-scopes-error" : undefined}>
        <legend>What it may do</legend>
        {SCOPES.map((scope) => {
          const id = `key-scope-${scope.replace(":", "-")}`;
          return (
            <div key={scope} class="choice">
              <input type="checkbox" id={id} name="scopes" value={scope} checked={scopes.includes(scope)} onChange={() => toggle(scope)} aria-describedby={`${id}-hint`} />
              <span>
                <label for={id}>{SCOPE_TEXT[scope].label}</label> <code>{scope}</code>
                <span class="field-hint scope-hint" id={`${id}-hint`}>
                  {SCOPE_TEXT[scope].allows}
                </span>
              </span>
            </div>
          );
        })}
        {errors.scopes && (
          <p class="field-error" id="key-scopes-error">
            {errors.scopes}
          </p>
        )}
      </fieldset>
      <div class={`field${errors.site ? " field-invalid" : ""}`}>
        <label for="key-site">Sites it works on</label>
        <select id="key-site" name="site" aria-invalid={errors.site ? "true" : undefined} aria-describedby={errors.site ? "key-site-error" : undefined}>
          <option value="">Every site (new ones too)</option>
          {sites.map((site) => (
            <option key={site.id} value={String(site.id)}>
              Only {site.name} ({site.domain})
            </option>
          ))}
        </select>
        {errors.site && (
          <p class="field-error" id="key-site-error">
            {errors.site}
          </p>
        )}
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

/** The one-line curl call that sends an event with an events:write key (docs/stats-api.md). */
export function eventsExample(key: string): string {
  const body = '{"batch_id":"order-0000000042","events":[{"name":"purchase","visitor_id":"customer-1","session_id":"order-42","path":"/checkout"}]}';
  return `curl -H "Authorization: Bearer ${key}" -H "Content-Type: application/json" -d '${body}' ${location.origin}/api/events`;
}

function ShowKey({ created, onDone }: { created: ApiKey; onDone: () => void }) {
  const key = created.key ?? "";
  const example = created.scopes.includes("events:write") ? eventsExample(key) : null;
  return (
    <div class="dialog-body">
      <Notice kind="info">This is the only time the key is shown; Sightline keeps only a hash of it.</Notice>
      <pre class="snippet"><code id="new-key">{key}</code></pre>
      <CopyButton text={key} label="Copy key" target={() => document.getElementById("new-key")} />
      <p class="muted">
        Use it as <code>Authorization: Bearer {created.prefix}…</code>
        {created.scopes.includes("stats:read") && (
          <>
            {" "}on <code>GET /api/sites/ID/reports/summary</code> and the other report endpoints
          </>
        )}
        .
      </p>
      {example && (
        <>
          <p>Send an event from a backend with it:</p>
          <pre class="snippet events-example"><code id="events-example">{example}</code></pre>
          <CopyButton text={example} label="Copy example" target={() => document.getElementById("events-example")} />
        </>
      )}
      <div class="dialog-actions">
        <button type="button" class="button button-primary" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}
