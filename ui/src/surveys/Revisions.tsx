// The revisions of a survey: which one is live, each one's responses, and any one's definition.
import { useState } from "preact/hooks";

import { messageOf } from "../api";
import { Notice } from "../components/Notice";
import { count, dateTime } from "../format";
import { type Revision, type Survey, surveysApi } from "./api";
import { Preview } from "./Preview";

export function Revisions({ survey }: { survey: Survey }) {
  const [shown, setShown] = useState<Revision | null>(null);
  const [error, setError] = useState<string | null>(null);
  const numbers = [...survey.revisions.map((r) => r.revision), ...(survey.draft_revision ? [survey.draft_revision] : [])];
  const open = async (n: number) => {
    setError(null);
    try {
      setShown(await surveysApi.revision(survey.id, n));
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  return (
    <section class="panel sv-revisions" aria-labelledby="sv-revisions-title">
      <h2 id="sv-revisions-title">Revisions</h2>
      {numbers.length === 0 ? (
        <p class="field-hint">Not saved yet.</p>
      ) : (
        <ol class="sv-revision-list">
          {numbers
            .slice()
            .reverse()
            .map((n) => {
              const published = survey.revisions.find((r) => r.revision === n);
              const live = survey.status === "published" && survey.revision === n;
              return (
                <li key={n} class="sv-revision" data-revision={n}>
                  <span class="sv-revision-name">Revision {n}</span>
                  {live && <span class="badge badge-connected">Live</span>}
                  {!published && <span class="badge badge-pending">Draft</span>}
                  <span class="sv-revision-facts">
                    {published
                      ? `Published ${dateTime(published.published_at)} · ${count(published.responses)} ${published.responses === 1 ? "response" : "responses"}`
                      : "Not published"}
                  </span>
                  <span class="sv-revision-actions">
                    <button type="button" class="link-button" onClick={() => void open(n)}>
                      View revision {n}
                    </button>
                    {published && <a href={`/surveys/${survey.id}/responses?revision=${n}`}>Responses</a>}
                  </span>
                </li>
              );
            })}
        </ol>
      )}
      {error && <Notice kind="error">{error}</Notice>}
      {shown && (
        <div class="sv-revision-view" aria-live="polite">
          <h3>
            Revision {shown.revision} {shown.published ? `(published ${shown.published_at ? dateTime(shown.published_at) : ""})` : "(draft)"}
          </h3>
          <Preview definition={shown} id={`revision-${shown.revision}-preview`} />
          <button type="button" class="button button-quiet" onClick={() => setShown(null)}>
            Close revision {shown.revision}
          </button>
        </div>
      )}
    </section>
  );
}
