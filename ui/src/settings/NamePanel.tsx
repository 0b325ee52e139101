import { useEffect, useState } from "preact/hooks";

import { api, type Site } from "../api";
import { formMessage } from "../formMessages";
import { Breakable } from "../components/Breakable";
import { Field } from "../components/Field";
import { Notice } from "../components/Notice";
import { dateTime } from "../format";

/** Renaming: the name is how the site appears in the console; the domain cannot change. */
export function NamePanel({ site, onChange }: { site: Site; onChange: (site: Site) => void }) {
  const [name, setName] = useState(site.name);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);

  useEffect(() => setName(site.name), [site.name]);

  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    setSaved(false);
    if (!name.trim()) {
      setError("Give the site a name.");
      return;
    }
    setBusy(true);
    setError(null);
    try {
      onChange(await api.updateSite(site.id, { name: name.trim() }));
      setSaved(true);
    } catch (failure) {
      setError(formMessage("site", failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="panel" aria-labelledby="name-title">
      <div class="panel-head">
        <h2 id="name-title">Details</h2>
      </div>
      <dl class="facts">
        <div>
          <dt>Domain</dt>
          <dd><Breakable text={site.domain} /></dd>
        </div>
        <div>
          <dt>Added</dt>
          <dd>
            <time dateTime={site.created_at}>{dateTime(site.created_at)}</time>
          </dd>
        </div>
      </dl>
      <form class="inline-form" onSubmit={submit} noValidate>
        <Field
          id="site-rename"
          name="name"
          label="Site name"
          maxLength={100}
          value={name}
          onInput={(event) => setName(event.currentTarget.value)}
          error={error}
        />
        <button type="submit" class="button" disabled={busy || name.trim() === site.name}>
          Rename
        </button>
      </form>
      {saved && <Notice kind="success">The site is renamed.</Notice>}
      <p class="field-hint">
        Renaming keeps the domain and the snippet. To move to another domain, add a new site.
      </p>
    </section>
  );
}
