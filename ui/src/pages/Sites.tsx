import { useLocation } from "preact-iso/router";
import { useEffect, useState } from "preact/hooks";

import { ApiError, api, messageOf, type Site } from "../api";
import { Badge } from "../components/Badge";
import { Breakable } from "../components/Breakable";
import { Dialog } from "../components/Dialog";
import { Field } from "../components/Field";
import { Notice } from "../components/Notice";
import { Page } from "../components/Page";
import { checkErrorText, cleanDomain } from "../connection";
import { count, dateTime, timeAgo } from "../format";
import { sparkPoints } from "../components/Trend";
import { useAutoRefresh, useResource } from "../hooks";
import { useCanChange } from "../user";
import { Change, overview, type OverviewSite } from "./Overview";

export function SitesPage() {
  const canChange = useCanChange();
  const [refreshed, setRefreshed] = useState(0);
  const sites = useResource(async () => {
    const list = await api.sites();
    setRefreshed((n) => n + 1);
    return list;
  });
  const { query } = useLocation();
  const [adding, setAdding] = useState(false);
  useAutoRefresh(sites.reload, 30_000);
  const week = useWeek(refreshed > 0 ? (sites.data?.length ?? 0) : -1);

  return (
    <Page
      title="Sites"
      subtitle="Each site gets a snippet to paste into its pages; its connection shows whether data arrives."
      actions={
        <>
          <a class="button" href="/overview">
            All sites at a glance
          </a>
          {canChange && (
            <button type="button" class="button button-primary" onClick={() => setAdding(true)}>
              <span class="icon icon-plus" aria-hidden="true" />
              Add site
            </button>
          )}
        </>
      }
    >
      {query.deleted && <Notice kind="success">{query.deleted} is deleted, with all its data.</Notice>}
      {sites.error && <Notice kind="error">{sites.error}</Notice>}
      {sites.loading && !sites.data && <p class="loading">Loading sites…</p>}
      {sites.data && sites.data.length === 0 && (
        <div class="panel empty">
          <h2>No sites yet</h2>
          <p>Add your first site to get the snippet that connects it to Sightline.</p>
        </div>
      )}
      {sites.data && sites.data.length > 0 && (
        <ul class="site-list" aria-label="Your sites">
          {sites.data.map((site) => (
            <SiteRow key={site.id} site={site} week={week} />
          ))}
        </ul>
      )}
      <Dialog open={adding} title="Add a site" onClose={() => setAdding(false)}>
        <CreateSiteForm onCancel={() => setAdding(false)} />
      </Dialog>
    </Page>
  );
}

/** Every site's visitors of the last 7 days, one request for all of them (GET /api/overview), asked
 * when the list is first shown and when a site comes or goes (`sites`: how many; -1 before the list
 * is in), not at each 30-second refresh of the connections: it reads 14 days of every site's events. */
function useWeek(sites: number): Map<number, OverviewSite> | "failed" | null {
  const [week, setWeek] = useState<Map<number, OverviewSite> | "failed" | null>(null);
  useEffect(() => {
    if (sites < 0) return;
    let alive = true;
    overview({ range: "7d" }).then(
      (body) => alive && setWeek(new Map(body.sites.map((s) => [s.site_id, s]))),
      (failure) => {
        if (alive && !(failure instanceof ApiError && failure.status === 401)) setWeek((now) => (now instanceof Map ? now : "failed"));
      },
    );
    return () => {
      alive = false;
    };
  }, [sites]);
  return week;
}

const weekday = new Intl.DateTimeFormat(undefined, { weekday: "short", timeZone: "UTC" });

function Week({ figures }: { figures: OverviewSite | undefined | "failed" | null }) {
  if (figures === "failed") return <span class="trend-missing">Figures unavailable</span>;
  if (!figures) return <span class="trend-missing">…</span>;
  const visitors = figures.visitors;
  const described = figures.series.map((p) => `${weekday.format(new Date(`${p.date}T12:00:00Z`))} ${count(p.visitors)}`).join(", ");
  return (
    <span class="site-week">
      <span class="trend-today">
        <strong>{count(visitors)}</strong> {visitors === 1 ? "visitor" : "visitors"} in 7 days
      </span>
      <span class="site-week-change">
        <Change site={figures} /> on the 7 days before
      </span>
      <svg class="sparkline" viewBox="0 0 96 28" width={96} height={28} role="img" aria-label={`Visitors of the last 7 days: ${described}`}>
        <polyline points={sparkPoints(figures.series.map((p) => p.visitors))} fill="none" stroke="currentColor" stroke-width="2" stroke-linejoin="round" stroke-linecap="round" />
      </svg>
    </span>
  );
}

function SiteRow({ site, week }: { site: Site; week: Map<number, OverviewSite> | "failed" | null }) {
  const { connection } = site;
  return (
    <li class="site-row" data-site-id={site.id}>
      <div class="site-ident">
        <a class="site-name" href={`/sites/${site.id}`}>
          {site.name}
        </a>
        <span class="site-domain"><Breakable text={site.domain} /></span>
      </div>
      <div class="site-state">
        <Badge state={connection.state} />
      </div>
      <dl class="site-facts">
        <div class="site-trend">
          <dt>Visitors</dt>
          <dd>
            <Week figures={week instanceof Map ? week.get(site.id) : week} />
          </dd>
        </div>
        <div>
          <dt>Last event</dt>
          <dd>
            {connection.last_event_at ? (
              <time dateTime={connection.last_event_at} title={dateTime(connection.last_event_at)}>
                {timeAgo(connection.last_event_at)}
              </time>
            ) : (
              "None yet"
            )}
          </dd>
        </div>
        <div>
          <dt>Last check</dt>
          <dd>
            {connection.last_check_at ? (
              <time dateTime={connection.last_check_at} title={dateTime(connection.last_check_at)}>
                {timeAgo(connection.last_check_at)}
              </time>
            ) : (
              "Not checked"
            )}
            {connection.last_check_at && (connection.last_check_error ? ", failed" : ", snippet found")}
          </dd>
        </div>
      </dl>
      {connection.last_check_error && connection.state !== "disabled" && (
        <p class="site-error">
          <span class="icon icon-warning" aria-hidden="true" />
          {checkErrorText(connection.last_check_error, site.domain)}
        </p>
      )}
    </li>
  );
}

function CreateSiteForm({ onCancel }: { onCancel: () => void }) {
  const { route } = useLocation();
  const [busy, setBusy] = useState(false);
  const [errors, setErrors] = useState<{ name?: string; domain?: string; form?: string }>({});

  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const name = (form.elements.namedItem("name") as HTMLInputElement).value;
    const domain = (form.elements.namedItem("domain") as HTMLInputElement).value;
    const found: typeof errors = {};
    if (!name.trim()) found.name = "Give the site a name.";
    if (!domain.trim()) found.domain = "Enter the site's domain, for example example.com.";
    setErrors(found);
    if (found.name || found.domain) {
      form.querySelector<HTMLInputElement>(found.name ? "#site-name" : "#site-domain")?.focus();
      return;
    }
    setBusy(true);
    try {
      const site = await api.createSite(name.trim(), cleanDomain(domain));
      route(`/sites/${site.id}?created=1`);
    } catch (failure) {
      setBusy(false);
      if (failure instanceof ApiError && (failure.field === "name" || failure.field === "domain")) {
        setErrors({ [failure.field]: failure.message });
        form.querySelector<HTMLInputElement>(`#site-${failure.field}`)?.focus();
      } else {
        setErrors({ form: messageOf(failure) });
      }
    }
  };

  return (
    <form class="dialog-body" onSubmit={submit} noValidate>
      <Field id="site-name" name="name" label="Name" maxLength={100} required autoFocus error={errors.name} />
      <Field
        id="site-domain"
        name="domain"
        label="Domain"
        hint="The host name, e.g. example.com or shop.example.com; for local development also host:port, e.g. localhost:8080. A pasted address is cleaned to its host."
        required
        maxLength={260}
        spellcheck={false}
        autocapitalize="none"
        autocomplete="off"
        inputMode="url"
        error={errors.domain}
      />
      {errors.form && <Notice kind="error">{errors.form}</Notice>}
      <div class="dialog-actions">
        <button type="button" class="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" class="button button-primary" disabled={busy}>
          {busy ? "Adding…" : "Add site"}
        </button>
      </div>
    </form>
  );
}
