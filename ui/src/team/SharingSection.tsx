// The Sharing section of a site's settings (owner and admins): read-only links to the site's
// reports dashboard, optionally with a password; each link can be copied again and deleted (it
// then answers 404).
import { useState } from "preact/hooks";

import { ApiError, messageOf, request } from "../api";
import { formMessage } from "../formMessages";
import { CopyButton } from "../components/CopyButton";
import { Field } from "../components/Field";
import { Notice } from "../components/Notice";
import { dateTime, timeAgo } from "../format";
import { useResource } from "../hooks";
import type { SettingsProps } from "../settings/registry";

interface Share {
  id: number;
  site_id: number;
  url: string;
  password: boolean;
  created_at: string;
  last_viewed_at: string | null;
}

const sharesOf = (siteId: number) =>
  request<{ shares: Share[] }>("GET", `/api/sites/${siteId}/shares`).then((r) => r.shares);

export function SharingSection({ site }: SettingsProps) {
  const siteId = site.id;
  const shares = useResource(() => sharesOf(siteId));
  const [message, setMessage] = useState<{ kind: "error" | "success"; text: string } | null>(null);
  const [passwordError, setPasswordError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const create = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const input = form.elements.namedItem("password") as HTMLInputElement;
    const password = input.value;
    setBusy(true);
    setPasswordError(null);
    setMessage(null);
    try {
      await request<Share>("POST", `/api/sites/${siteId}/shares`, password ? { password } : {});
      input.value = "";
      setMessage({ kind: "success", text: "The link is ready. Copy it from the list below." });
      await shares.reload();
    } catch (failure) {
      if (failure instanceof ApiError && failure.field === "password") setPasswordError(formMessage("share", failure));
      else setMessage({ kind: "error", text: messageOf(failure) });
    }
    setBusy(false);
  };

  const remove = async (share: Share) => {
    setMessage(null);
    try {
      await request<void>("DELETE", `/api/shares/${share.id}`);
      setMessage({ kind: "success", text: "The link was deleted; whoever opens it now gets “not found”." });
      await shares.reload();
    } catch (failure) {
      setMessage({ kind: "error", text: messageOf(failure) });
    }
  };

  return (
    <section class="panel" aria-labelledby="sharing-title">
      <h2 id="sharing-title">Sharing</h2>
      <p class="muted">
        Read-only links to this site's reports dashboard, for people without an account. They show the reports only:
        no recordings, surveys or visitor codes.
      </p>
      {message && <Notice kind={message.kind}>{message.text}</Notice>}
      <form class="share-new" onSubmit={create} noValidate>
        <Field
          id="share-password"
          name="password"
          label="Password for a new link (optional)"
          hint="At least 8 characters. Without one, anyone with the link sees the dashboard."
          type="password"
          autocomplete="new-password"
          maxLength={1024}
          error={passwordError}
        />
        <button type="submit" class="button button-primary" disabled={busy}>
          {busy ? "Creating…" : "Create link"}
        </button>
      </form>
      <h3>Links</h3>
      {shares.error && <Notice kind="error">{shares.error}</Notice>}
      {shares.data && shares.data.length === 0 && <p class="muted">No shared link yet.</p>}
      {shares.data && shares.data.length > 0 && (
        <ul class="share-list">
          {shares.data.map((share) => (
            <li key={share.id} class="share-row" data-share={share.id}>
              <pre class="snippet"><code id={`share-${share.id}`}>{share.url}</code></pre>
              <p class="muted">
                {share.password ? "With a password" : "No password"} · created {dateTime(share.created_at)} ·{" "}
                {share.last_viewed_at ? `last opened ${timeAgo(share.last_viewed_at)}` : "never opened"}
              </p>
              <div class="share-actions">
                <CopyButton text={share.url} label="Copy link" target={() => document.getElementById(`share-${share.id}`)} />
                <button type="button" class="button button-quiet" onClick={() => remove(share)}>
                  Delete<span class="visually-hidden"> the link created {dateTime(share.created_at)}</span>
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
