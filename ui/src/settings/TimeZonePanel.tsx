import { useEffect, useMemo, useState } from "preact/hooks";

import { api, messageOf } from "../api";
import { Notice } from "../components/Notice";
import type { SettingsProps } from "./registry";

/** Every IANA zone the browser knows, with UTC first; the server checks the choice again. */
function zones(current: string): string[] {
  const known: string[] =
    typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
  return ["UTC", ...new Set([...known, current].filter((zone) => zone !== "UTC"))].sort((a, b) =>
    a === "UTC" ? -1 : b === "UTC" ? 1 : a.localeCompare(b),
  );
}

/** The zone the reports use for days and hours, and for the default custom range. */
export function TimeZonePanel({ site, onChange }: SettingsProps) {
  const [zone, setZone] = useState(site.timezone);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const options = useMemo(() => zones(site.timezone), [site.timezone]);
  const browser = Intl.DateTimeFormat().resolvedOptions().timeZone;

  useEffect(() => setZone(site.timezone), [site.timezone]);

  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setSaved(false);
    try {
      onChange(await api.updateSite(site.id, { timezone: zone }));
      setSaved(true);
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="panel" aria-labelledby="time-zone-title">
      <div class="panel-head">
        <h2 id="time-zone-title">Time zone</h2>
      </div>
      <form class="inline-form" onSubmit={submit} noValidate>
        <div class={`field${error ? " field-invalid" : ""}`}>
          <label for="site-timezone">Reports' time zone</label>
          <p class="field-hint" id="site-timezone-hint">
            Days and hours in the reports start at midnight in this zone. Existing data is not changed.
          </p>
          <select
            id="site-timezone"
            value={zone}
            aria-describedby={error ? "site-timezone-hint site-timezone-error" : "site-timezone-hint"}
            aria-invalid={error ? "true" : undefined}
            onChange={(event) => setZone(event.currentTarget.value)}
          >
            {options.map((name) => (
              <option key={name} value={name}>
                {name.replaceAll("_", " ")}
              </option>
            ))}
          </select>
          {error && (
            <p class="field-error" id="site-timezone-error">
              {error}
            </p>
          )}
        </div>
        <button type="submit" class="button" disabled={busy || zone === site.timezone}>
          Save time zone
        </button>
      </form>
      {browser && browser !== zone && (
        <p class="field-hint">
          Your browser is in {browser.replaceAll("_", " ")}.{" "}
          <button type="button" class="link-button" onClick={() => setZone(browser)}>
            Use it
          </button>
        </p>
      )}
      {saved && <Notice kind="success">The reports now use {site.timezone.replaceAll("_", " ")}.</Notice>}
    </section>
  );
}
