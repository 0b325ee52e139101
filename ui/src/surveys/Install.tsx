// How to open a survey on the site: its id and the exact line to paste, with a copy button.
import { useRef } from "preact/hooks";

import { CopyButton } from "../components/CopyButton";

export function feedbackLine(surveyId: number): string {
  return `analytics.feedback(${surveyId});`;
}

export function Install({ surveyId, published, autoOpen }: { surveyId: number; published: boolean; autoOpen: boolean }) {
  const code = useRef<HTMLElement>(null);
  const line = feedbackLine(surveyId);
  return (
    <section class="panel sv-install" aria-labelledby="sv-install-title">
      <h2 id="sv-install-title">Show it on your site</h2>
      <p>
        Survey id <strong>{surveyId}</strong>. Call this on the pages where visitors may answer (after the Sightline
        snippet); the survey opens when the page matches its rules and the visitor has not answered it yet:
      </p>
      <pre class="snippet">
        <code ref={code}>{line}</code>
      </pre>
      <div class="copy">
        <CopyButton text={line} label="Copy the line" target={() => code.current} />
      </div>
      {autoOpen && (
        <p class="field-hint">
          With <em>Open by itself</em> on (see Opening), no line is needed: the survey opens on the targeted pages by
          itself. The line still opens it where you call it, for example after a purchase.
        </p>
      )}
      {!published && <p class="field-hint">Visitors see it once you publish it.</p>}
    </section>
  );
}
