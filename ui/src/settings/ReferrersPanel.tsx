import { useEffect, useState } from "preact/hooks";

import { ApiError, api, messageOf } from "../api";
import { Notice } from "../components/Notice";
import type { SettingsProps } from "./registry";

/** Referrer spam: the site's own blocked hosts, beside the community list every site uses. */
export function ReferrersPanel({ site, onChange }: SettingsProps) {
  const listed = site.blocked_referrers.join("\n");
  const [hosts, setHosts] = useState(listed);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);

  useEffect(() => setHosts(listed), [listed]);

  const save = async (event: SubmitEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setSaved(null);
    const list = hosts.split(/[\n,]/).map((line) => line.trim()).filter(Boolean);
    try {
      const changed = await api.updateSite(site.id, { blocked_referrers: list });
      onChange(changed);
      const count = changed.blocked_referrers.length;
      setSaved(count ? `${count} referrer ${count === 1 ? "host is" : "hosts are"} blocked on this site.` : "No referrer host of your own is blocked.");
    } catch (failure) {
      const message = messageOf(failure);
      const field = failure instanceof ApiError ? failure.field ?? "" : "";
      const index = Number(field.split(".")[1]);
      setError(Number.isInteger(index) ? `Line ${index + 1}: ${message}` : message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="panel" aria-labelledby="referrers-title">
      <div class="panel-head">
        <h2 id="referrers-title">Referrer spam</h2>
      </div>
      <p class="field-hint">
        Visits "referred" by spam sites are advertising, not people. Sightline drops them for every site using the
        community's public list of about 2,300 spam hosts; health counts them as referrer spam. Add hosts of your own
        below: a host also blocks its subdomains.
      </p>
      <form class="stacked-form" onSubmit={save} noValidate>
        <div class={`field${error ? " field-invalid" : ""}`}>
          <label for="blocked-referrers">Blocked referrer hosts</label>
          <p class="field-hint" id="blocked-referrers-hint">
            One host per line, such as spam.example (a pasted address counts by its host). At most 200.
          </p>
          <textarea
            id="blocked-referrers"
            rows={4}
            spellcheck={false}
            value={hosts}
            aria-invalid={error ? "true" : undefined}
            aria-describedby={`blocked-referrers-hint${error ? " blocked-referrers-error" : ""}`}
            onInput={(event) => setHosts(event.currentTarget.value)}
          />
          {error && (
            <p class="field-error" id="blocked-referrers-error">
              {error}
            </p>
          )}
        </div>
        <button type="submit" class="button" disabled={busy}>
          Save blocked referrers
        </button>
      </form>
      {saved && !error && <Notice kind="success">{saved}</Notice>}
    </section>
  );
}
