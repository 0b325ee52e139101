import { useEffect, useMemo, useState } from "preact/hooks";

import { api, type WeekStart } from "../api";
import { formMessage } from "../formMessages";
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

/** The first days of the week a site may choose (docs/reports.md: weekly retention cohorts). */
const WEEK_STARTS: { value: WeekStart; label: string }[] = [
  { value: "monday", label: "Monday" },
  { value: "sunday", label: "Sunday" },
  { value: "saturday", label: "Saturday" },
];

/** The zone the reports use for days and hours, and for the default custom range; the first day of
 * the site's weeks. */
export function TimeZonePanel({ site, onChange }: SettingsProps) {
  const [zone, setZone] = useState(site.timezone);
  const [weekStart, setWeekStart] = useState<WeekStart>(site.week_start);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const options = useMemo(() => zones(site.timezone), [site.timezone]);
  const browser = Intl.DateTimeFormat().resolvedOptions().timeZone;

  useEffect(() => setZone(site.timezone), [site.timezone]);
  useEffect(() => setWeekStart(site.week_start), [site.week_start]);
  const unchanged = zone === site.timezone && weekStart === site.week_start;

  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setSaved(false);
    try {
      onChange(await api.updateSite(site.id, { timezone: zone, week_start: weekStart }));
      setSaved(true);
    } catch (failure) {
      setError(formMessage("site", failure));
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
        <div class="field">
          <label for="site-week-start">First day of the week</label>
          <p class="field-hint" id="site-week-start-hint">
            Weekly retention cohorts start on this day.
          </p>
          <select id="site-week-start" value={weekStart} aria-describedby="site-week-start-hint" onChange={(event) => setWeekStart(event.currentTarget.value as WeekStart)}>
            {WEEK_STARTS.map((day) => (
              <option key={day.value} value={day.value}>
                {day.label}
              </option>
            ))}
          </select>
        </div>
        <button type="submit" class="button" disabled={busy || unchanged}>
          Save time zone and week
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
      {saved && (
        <Notice kind="success">
          The reports now use {site.timezone.replaceAll("_", " ")}. Weeks start on {WEEK_STARTS.find((day) => day.value === site.week_start)?.label}.
        </Notice>
      )}
    </section>
  );
}
