import { useLocation, useRoute } from "preact-iso/router";

import { api, type Site } from "../api";
import { Badge } from "../components/Badge";
import { Breakable } from "../components/Breakable";
import { Notice } from "../components/Notice";
import { Page } from "../components/Page";
import { useAutoRefresh, useResource } from "../hooks";
import { ConnectionPanel } from "./site/ConnectionPanel";
import { SnippetPanel } from "./site/SnippetPanel";

export function SitePage() {
  const { params } = useRoute();
  return <SiteDetail key={params.id} id={Number(params.id)} />;
}

function SiteDetail({ id }: { id: number }) {
  const { query } = useLocation();
  const site = useResource(() => api.site(id));
  // The state changes on the server (the first event arrives): keep it current.
  useAutoRefresh(site.reload, 30_000);
  const back = { href: "/sites", label: "All sites" };

  if (site.loading && !site.data) {
    return (
      <Page title="Site" back={back}>
        {site.error ? <Notice kind="error">{site.error}</Notice> : <p class="loading">Loading the site…</p>}
      </Page>
    );
  }
  if (!site.data) {
    return (
      <Page title="Site not found" back={back}>
        {site.error ? (
          <Notice kind="error">{site.error}</Notice>
        ) : (
          <div class="panel">
            <p>You have no site with this id. It may have been removed, or the address is wrong.</p>
          </div>
        )}
      </Page>
    );
  }
  const current = site.data;
  const update = (next: Site) => site.setData(next);
  return (
    <Page
      title={current.name}
      back={back}
      subtitle={
        <>
          <span class="site-domain"><Breakable text={current.domain} /></span>
          <Badge state={current.connection.state} />
        </>
      }
    >
      {query.created && (
        <Notice kind="success">
          The site is added. Paste the snippet into its pages, then check the connection.
        </Notice>
      )}
      <nav class="site-links" aria-label="This site's data">
        <ul>
          <li>
            <a href={`/sites/${current.id}/reports`}>Reports</a>
          </li>
          <li>
            <a href={`/recordings?site=${current.id}`}>Recordings</a>
          </li>
          <li>
            <a href={`/surveys?site=${current.id}`}>Surveys</a>
          </li>
          <li>
            <a href={`/sites/${current.id}/settings`}>Settings</a>
          </li>
        </ul>
      </nav>
      <div class="site-grid">
        <ConnectionPanel site={current} onChange={update} />
        <SnippetPanel site={current} />
      </div>
    </Page>
  );
}
