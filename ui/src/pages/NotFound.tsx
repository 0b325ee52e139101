import { useLocation } from "preact-iso/router";

import { Page } from "../components/Page";

/** The console's own page for an address it does not have, with the way back. */
export function NotFoundPage() {
  const { path } = useLocation();
  return (
    <Page title="Page not found">
      <div class="panel">
        <p>
          There is no console page at <code class="not-found-path">{path}</code>. The address may be mistyped, or the page may have moved.
        </p>
        <p>
          <a class="button" href="/sites">
            Go to your sites
          </a>
        </p>
      </div>
    </Page>
  );
}
