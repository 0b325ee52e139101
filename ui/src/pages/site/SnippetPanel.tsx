import { useRef, useState } from "preact/hooks";

import type { Site } from "../../api";
import { CopyButton } from "../../components/CopyButton";
import { snippetFor } from "../../connection";

/** The tag to paste, with an option to wait for visitors' consent, and a copy button. */
export function SnippetPanel({ site }: { site: Site }) {
  const [consent, setConsent] = useState(false);
  const [noscript, setNoscript] = useState(false);
  const code = useRef<HTMLElement>(null);
  const text = snippetFor(site, consent, noscript);
  return (
    <section class="panel" aria-labelledby="snippet-title">
      <div class="panel-head">
        <h2 id="snippet-title">Snippet</h2>
      </div>
      <p>
        Paste this tag into the <code>&lt;head&gt;</code> of every page of {site.domain}.
      </p>
      <pre class="snippet">
        <code ref={code}>{text}</code>
      </pre>
      <div class="checkbox-row">
        <input
          id="snippet-consent"
          type="checkbox"
          checked={consent}
          onChange={(event) => setConsent(event.currentTarget.checked)}
        />
        <label for="snippet-consent">
          Wait for consent: collect nothing until the page calls <code>analytics.start()</code>
        </label>
      </div>
      <div class="checkbox-row">
        <input
          id="snippet-noscript"
          type="checkbox"
          checked={noscript && !consent}
          disabled={consent}
          aria-describedby="snippet-noscript-hint"
          onChange={(event) => setNoscript(event.currentTarget.checked)}
        />
        <label for="snippet-noscript">
          Also count visitors without JavaScript (a <code>&lt;noscript&gt;</code> image)
        </label>
      </div>
      <p class="field-hint" id="snippet-noscript-hint">
        {consent
          ? "Not with consent: an image cannot wait for it."
          : "Counts a pageview per page, cookieless: no recordings, surveys or events from those visitors."}
      </p>
      <CopyButton text={text} label="Copy snippet" target={() => code.current} />
      <p class="field-hint">
        Site key <code class="key">{site.key}</code> (public; it only lets pages of {site.domain} send data).
      </p>
    </section>
  );
}
