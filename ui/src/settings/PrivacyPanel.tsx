import { useEffect, useRef, useState } from "preact/hooks";

import { ApiError, api, messageOf, type SiteChanges } from "../api";
import { CopyButton } from "../components/CopyButton";
import { Field } from "../components/Field";
import { Notice } from "../components/Notice";
import { Switch } from "../components/Switch";
import type { SettingsProps } from "./registry";

const development = (domain: string) => /^(localhost|127\.|\[::1\])/.test(domain) || domain.endsWith(".localhost");

/** The link that marks the owner's own browser as excluded on their site (the SDK reads it). */
export const exclusionLink = (domain: string) =>
  `${development(domain) ? "http" : "https"}://${domain}/?sightline=exclude`;

/** Cookieless counting, excluded addresses, the owner's exclusion link and retention. */
export function PrivacyPanel({ site, onChange }: SettingsProps) {
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [addresses, setAddresses] = useState(site.excluded_addresses.join("\n"));
  const [addressError, setAddressError] = useState<string | null>(null);
  const [days, setDays] = useState(site.retention_days === null ? "" : String(site.retention_days));
  const [daysError, setDaysError] = useState<string | null>(null);
  const link = useRef<HTMLElement>(null);

  useEffect(() => setAddresses(site.excluded_addresses.join("\n")), [site.excluded_addresses.join("\n")]);
  useEffect(() => setDays(site.retention_days === null ? "" : String(site.retention_days)), [site.retention_days]);

  const change = async (changes: SiteChanges, done: string, field: string) => {
    setBusy(field);
    setError(null);
    setSaved(null);
    try {
      onChange(await api.updateSite(site.id, changes));
      setSaved(done);
    } catch (failure) {
      const message = messageOf(failure);
      const on = failure instanceof ApiError ? failure.field ?? "" : "";
      if (on.startsWith("excluded_addresses")) {
        const index = Number(on.split(".")[1]);
        setAddressError(Number.isInteger(index) ? `Line ${index + 1}: ${message}` : message);
      } else if (on === "retention_days") setDaysError(message);
      else setError(message);
    } finally {
      setBusy(null);
    }
  };

  const saveAddresses = (event: SubmitEvent) => {
    event.preventDefault();
    setAddressError(null);
    const list = addresses.split(/[\n,]/).map((line) => line.trim()).filter(Boolean);
    void change({ excluded_addresses: list }, list.length ? "Excluded addresses saved." : "No address is excluded.", "excluded_addresses");
  };

  const saveDays = (event: SubmitEvent) => {
    event.preventDefault();
    setDaysError(null);
    const text = days.trim();
    const value = Number(text);
    if (text !== "" && (!Number.isInteger(value) || value < 1 || value > 36500)) {
      setDaysError("Enter a whole number of days from 1 to 36500, or leave it empty for the server's setting.");
      return;
    }
    void change(
      { retention_days: text === "" ? null : value },
      text === "" ? "Retention follows the server's setting." : `Events and survey responses are kept ${value} days.`,
      "retention_days",
    );
  };

  const url = exclusionLink(site.domain);
  return (
    <section class="panel" aria-labelledby="privacy-title">
      <div class="panel-head">
        <h2 id="privacy-title">Privacy</h2>
      </div>
      <Switch
        id="cookieless"
        label="Count without cookies or storage"
        description="Nothing is stored on visitors' devices. A visitor is recognised for one day only (a daily key, destroyed after 48 hours), so returning visitors, retention and multi-day unique visitors cannot be counted; recordings and surveys are off."
        checked={site.cookieless}
        busy={busy === "cookieless"}
        onChange={(on) => void change({ cookieless: on }, on ? "Cookieless counting is on." : "Cookieless counting is off.", "cookieless")}
      />
      <form class="stacked-form" onSubmit={saveAddresses} noValidate>
        <div class={`field${addressError ? " field-invalid" : ""}`}>
          <label for="excluded-addresses">Excluded addresses</label>
          <p class="field-hint" id="excluded-addresses-hint">
            One address or CIDR range per line (203.0.113.7, 10.0.0.0/8, 2001:db8::/32). Their events are not stored;
            health counts them as excluded.
          </p>
          <textarea
            id="excluded-addresses"
            rows={4}
            spellcheck={false}
            value={addresses}
            aria-invalid={addressError ? "true" : undefined}
            aria-describedby={`excluded-addresses-hint${addressError ? " excluded-addresses-error" : ""}`}
            onInput={(event) => setAddresses(event.currentTarget.value)}
          />
          {addressError && (
            <p class="field-error" id="excluded-addresses-error">
              {addressError}
            </p>
          )}
        </div>
        <button type="submit" class="button" disabled={busy === "excluded_addresses"}>
          Save addresses
        </button>
      </form>
      <div class="field">
        <p class="field-label">Leave out your own browser</p>
        <p class="field-hint">
          Open this link in each browser you use: the site's script then ignores that browser, whatever its address.
          Open it with <code>?sightline=include</code> to count it again.
        </p>
        <div class="snippet-line">
          <code ref={link} class="exclusion-link">
            {url}
          </code>
          <a href={url} target="_blank" rel="noopener noreferrer">
            Open
          </a>
          <CopyButton text={url} label="Copy link" target={() => link.current} />
        </div>
      </div>
      <form class="inline-form" onSubmit={saveDays} noValidate>
        <Field
          id="retention-days"
          name="retention-days"
          label="Keep events and survey responses (days)"
          type="number"
          min={1}
          max={36500}
          step={1}
          inputMode="numeric"
          placeholder="Server's setting"
          value={days}
          onInput={(event) => setDays(event.currentTarget.value)}
          error={daysError}
          hint="Older data is deleted in the background. Empty: the server's --event-retention-days."
        />
        <button type="submit" class="button" disabled={busy === "retention_days"}>
          Save retention
        </button>
      </form>
      {error && <Notice kind="error">{error}</Notice>}
      {saved && !error && <Notice kind="success">{saved}</Notice>}
    </section>
  );
}
