import { useEffect, useState } from "preact/hooks";

import { ApiError, api, messageOf, type Site, type SiteChanges } from "../api";
import { Field } from "../components/Field";
import { Notice } from "../components/Notice";
import { Switch } from "../components/Switch";

const percent = (rate: number) => String(Math.round(rate * 1000) / 10);

/** Collection and recording switches, and the share of visits recorded. */
export function CollectionPanel({ site, onChange }: { site: Site; onChange: (site: Site) => void }) {
  const [busy, setBusy] = useState<keyof SiteChanges | null>(null);
  // The value being saved shows at once; it falls back to the stored one if saving fails.
  const [pending, setPending] = useState<SiteChanges>({});
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [rate, setRate] = useState(percent(site.recording_sample_rate));
  const [rateError, setRateError] = useState<string | null>(null);

  useEffect(() => setRate(percent(site.recording_sample_rate)), [site.recording_sample_rate]);

  const change = async (changes: SiteChanges, done: string) => {
    const field = Object.keys(changes)[0] as keyof SiteChanges;
    setBusy(field);
    setPending(changes);
    setError(null);
    setSaved(null);
    try {
      onChange(await api.updateSite(site.id, changes));
      setSaved(done);
      return true;
    } catch (failure) {
      const message = messageOf(failure);
      if (failure instanceof ApiError && failure.field === "recording_sample_rate") setRateError(message);
      else setError(message);
      return false;
    } finally {
      setBusy(null);
      setPending({});
    }
  };

  const saveRate = async (event: SubmitEvent) => {
    event.preventDefault();
    const value = Number(rate.replace(",", "."));
    if (rate.trim() === "" || !Number.isFinite(value) || value < 0 || value > 100) {
      setRateError("Enter a share from 0 to 100 percent.");
      return;
    }
    setRateError(null);
    await change({ recording_sample_rate: Math.round(value * 10) / 1000 }, `Recording ${value}% of visits.`);
  };

  return (
    <section class="panel" aria-labelledby="collection-title">
      <div class="panel-head">
        <h2 id="collection-title">Collection</h2>
      </div>
      <Switch
        id="collection-enabled"
        label="Collect events"
        description="When off, Sightline refuses this site's events and the connection shows as disabled."
        checked={pending.collection_enabled ?? site.collection_enabled}
        busy={busy === "collection_enabled"}
        onChange={(on) =>
          change({ collection_enabled: on }, on ? "Collection is on." : "Collection is off.")
        }
      />
      <Switch
        id="recording-enabled"
        label="Record sessions"
        description="Replays of visits, with every input and text masked. Visitors with Do Not Track or Global Privacy Control are never recorded."
        checked={pending.recording_enabled ?? site.recording_enabled}
        busy={busy === "recording_enabled"}
        onChange={(on) => change({ recording_enabled: on }, on ? "Recording is on." : "Recording is off.")}
      />
      <form class="inline-form" onSubmit={saveRate} noValidate>
        <Field
          id="sample-rate"
          name="sample-rate"
          label="Share of visits recorded (%)"
          type="number"
          min={0}
          max={100}
          step={0.1}
          inputMode="decimal"
          value={rate}
          onInput={(event) => setRate(event.currentTarget.value)}
          error={rateError}
          hint={site.recording_enabled ? undefined : "Applies when recording is on."}
        />
        <button type="submit" class="button" disabled={busy === "recording_sample_rate"}>
          Save share
        </button>
      </form>
      {error && <Notice kind="error">{error}</Notice>}
      {saved && !error && <Notice kind="success">{saved}</Notice>}
    </section>
  );
}
