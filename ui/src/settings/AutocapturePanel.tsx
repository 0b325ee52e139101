import { useEffect, useState } from "preact/hooks";

import { ApiError, api, messageOf, type Autocapture } from "../api";
import { Field } from "../components/Field";
import { Notice } from "../components/Notice";
import { Switch } from "../components/Switch";
import type { SettingsProps } from "./registry";

type Flag = Exclude<keyof Autocapture, "file_download_extensions">;

const CAPTURES: { flag: Flag; attribute: string; label: string; description: string }[] = [
  {
    flag: "outbound_links",
    attribute: "data-outbound-links",
    label: "Outbound links",
    description: "Clicks on links to other sites, with the address (without its query), as outbound_link events.",
  },
  {
    flag: "file_downloads",
    attribute: "data-file-downloads",
    label: "File downloads",
    description: "Clicks on links to files with the extensions below, or with the download attribute, as file_download events.",
  },
  {
    flag: "engagement",
    attribute: "data-engagement",
    label: "Engagement",
    description:
      "Time each page is actually looked at (visible tab only) and how far down it is scrolled. Never for visitors with Do Not Track or Global Privacy Control.",
  },
  {
    flag: "web_vitals",
    attribute: "data-web-vitals",
    label: "Web vitals",
    description: "LCP, INP, CLS, FCP and TTFB of real visits, with Google's good / needs improvement / poor rating.",
  },
  {
    flag: "heatmaps",
    attribute: "data-heatmaps",
    label: "Click heatmaps",
    description:
      "Where visitors click (element and position, never text), with rage and dead clicks. Never for visitors with Do Not Track or Global Privacy Control.",
  },
];

const listed = (extensions: string[]) => extensions.join(", ");

/** The site's autocapture switches and the extensions that count as file downloads. */
export function AutocapturePanel({ site, onChange }: SettingsProps) {
  const [busy, setBusy] = useState<string | null>(null);
  const [pending, setPending] = useState<Partial<Record<Flag, boolean>>>({});
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [extensions, setExtensions] = useState(listed(site.autocapture.file_download_extensions));
  const [extensionsError, setExtensionsError] = useState<string | null>(null);

  useEffect(
    () => setExtensions(listed(site.autocapture.file_download_extensions)),
    [site.autocapture.file_download_extensions.join(",")],
  );

  const toggle = async (flag: Flag, label: string, on: boolean) => {
    setBusy(flag);
    setPending({ [flag]: on });
    setError(null);
    setSaved(null);
    try {
      onChange(await api.updateSite(site.id, { autocapture: { [flag]: on } }));
      setSaved(`${label}: ${on ? "on" : "off"}.`);
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(null);
      setPending({});
    }
  };

  const saveExtensions = async (event: Event, reset = false) => {
    event.preventDefault();
    const given = extensions
      .split(/[\s,]+/)
      .map((e) => e.trim())
      .filter(Boolean);
    if (!reset && !given.length) {
      setExtensionsError("Name at least one extension, such as pdf, or restore the default list.");
      return;
    }
    setBusy("file_download_extensions");
    setExtensionsError(null);
    setError(null);
    setSaved(null);
    try {
      const next = await api.updateSite(site.id, { autocapture: { file_download_extensions: reset ? null : given } });
      onChange(next);
      setExtensions(listed(next.autocapture.file_download_extensions));
      setSaved(reset ? "The default extensions are restored." : "The extensions are saved.");
    } catch (failure) {
      if (failure instanceof ApiError && failure.field === "autocapture.file_download_extensions")
        setExtensionsError(failure.message);
      else setError(messageOf(failure));
    } finally {
      setBusy(null);
    }
  };

  return (
    <section class="panel" aria-labelledby="autocapture-title">
      <div class="panel-head">
        <h2 id="autocapture-title">Autocapture</h2>
      </div>
      <p class="field-hint">
        What the script captures on every page without code. A snippet attribute (such as{" "}
        <code>data-heatmaps</code>) turns a capture on for the pages that carry it, and{" "}
        <code>="false"</code> turns it off there. Elements tagged with <code>data-analytics-event</code> and pages
        marked with <code>data-analytics-404</code> are always captured.
      </p>
      {CAPTURES.map(({ flag, attribute, label, description }) => (
        <Switch
          key={flag}
          id={`capture-${flag.replace("_", "-")}`}
          label={label}
          description={`${description} Snippet attribute: ${attribute}.`}
          checked={pending[flag] ?? site.autocapture[flag]}
          busy={busy === flag}
          onChange={(on) => toggle(flag, label, on)}
        />
      ))}
      <form class="inline-form" onSubmit={(event) => saveExtensions(event)} noValidate>
        <Field
          id="download-extensions"
          name="download-extensions"
          label="File download extensions"
          value={extensions}
          onInput={(event) => setExtensions(event.currentTarget.value)}
          error={extensionsError}
          hint={'Separated by commas, such as pdf, zip, csv. A snippet\'s data-file-downloads="pdf,zip" replaces them on its pages.'}
        />
        <button type="submit" class="button" disabled={busy === "file_download_extensions"}>
          Save extensions
        </button>
        <button
          type="button"
          class="link-button"
          disabled={busy === "file_download_extensions"}
          onClick={(event) => saveExtensions(event, true)}
        >
          Restore the default list
        </button>
      </form>
      {error && <Notice kind="error">{error}</Notice>}
      {saved && !error && <Notice kind="success">{saved}</Notice>}
    </section>
  );
}
