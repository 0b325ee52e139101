import { useRoute } from "preact-iso/router";

import { Badge } from "../components/Badge";
import { Breakable } from "../components/Breakable";
import { Notice } from "../components/Notice";
import { Page } from "../components/Page";
import { api } from "../api";
import { useResource } from "../hooks";
import { useCanChange, VIEWER_NOTE } from "../user";
import { settingsSections } from "./registry";

/** /sites/:id/settings: every setting of one site, one section per feature (see registry.ts). */
export function SettingsPage() {
  const { params } = useRoute();
  return <Settings key={params.id} id={Number(params.id)} />;
}

function Settings({ id }: { id: number }) {
  const site = useResource(() => api.site(id));
  const canChange = useCanChange();
  const sections = settingsSections.filter((section) => canChange || section.viewer !== "hide");
  const back = { href: `/sites/${id}`, label: site.data ? site.data.name : "The site" };
  if (!site.data) {
    return (
      <Page title={site.loading ? "Site settings" : "Site not found"} back={{ href: "/sites", label: "All sites" }}>
        {site.error ? (
          <Notice kind="error">
            {site.error}{" "}
            <button type="button" class="link-button" onClick={() => void site.reload()}>
              Try again
            </button>
          </Notice>
        ) : site.loading ? (
          <p class="loading">Loading the site…</p>
        ) : (
          <div class="panel">
            <p>You have no site with this id. It may have been deleted, or the address is wrong.</p>
          </div>
        )}
      </Page>
    );
  }
  const current = site.data;
  return (
    <Page title="Settings" back={back} subtitle={
        <>
          <span class="site-domain"><Breakable text={current.domain} /></span>
          <Badge state={current.connection.state} />
        </>
      }>
      {!canChange && <Notice kind="info">{VIEWER_NOTE}</Notice>}
      <div class="settings">
        <nav class="settings-toc" aria-label="Settings sections">
          <ul>
            {sections.map((section) => (
              <li key={section.id}>
                <a href={`#${section.id}`}>{section.label}</a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="settings-sections">
          {sections.map(({ id: key, component: Section, viewer }) => (
            <div key={key} id={key} class="settings-section">
              {canChange || viewer === "open" ? (
                <Section site={current} onChange={site.setData} />
              ) : (
                // Read-only for a viewer: every control of the section is disabled at once.
                <fieldset class="read-only" disabled aria-label={`${key.replace("-", " ")}, read-only`}>
                  <Section site={current} onChange={site.setData} />
                </fieldset>
              )}
            </div>
          ))}
        </div>
      </div>
    </Page>
  );
}
