// A shared dashboard (/share/TOKEN): the site's reports, read-only, without a session; first the
// link's password when it has one. Nothing else of the console is reachable from here.
import { useLocation } from "preact-iso/router";
import { useEffect, useState } from "preact/hooks";

import { ApiError, messageOf, request } from "../api";
import { Field } from "../components/Field";
import { Logo } from "../components/Logo";
import { Notice } from "../components/Notice";
import { ThemeToggle } from "../components/ThemeToggle";
import { usePageTitle } from "../hooks";
import { readThroughShare } from "./api";
import { SiteReports, type ReportSite } from "./ReportsPage";

interface SharedSite extends ReportSite {
  password_required: boolean;
  unlocked: boolean;
}

export function SharedDashboard() {
  const { path } = useLocation();
  const token = decodeURIComponent(path.split("/")[2] ?? "");
  const home = `/share/${encodeURIComponent(token)}`;
  const [site, setSite] = useState<SharedSite | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  readThroughShare(token);

  const load = () =>
    request<SharedSite>("GET", `${home}/api/site`).then(setSite, (failure) => setProblem(messageOf(failure)));
  useEffect(() => void load(), [token]);

  return (
    <>
      <header class="topbar">
        <div class="topbar-inner">
          <span class="brand">
            <Logo />
            <span>Sightline</span>
          </span>
          <span class="shared-note">Shared dashboard, read-only</span>
          <div class="account">
            <ThemeToggle />
          </div>
        </div>
      </header>
      <main id="main" class="content" tabIndex={-1}>
        {problem && (
          <div class="page">
            <h1>Shared dashboard</h1>
            <Notice kind="error">{problem}</Notice>
          </div>
        )}
        {!problem && !site && <p class="loading">Loading the dashboard…</p>}
        {site && site.password_required && !site.unlocked && <Unlock site={site} home={home} onUnlocked={load} />}
        {site && (!site.password_required || site.unlocked) && (
          <SiteReports siteId={site.id} shared={{ site, home }} />
        )}
      </main>
    </>
  );
}

/** A shared link's password page: whose dashboard it is, what opening it shows, and the password. */
function Unlock({ site, home, onUnlocked }: { site: SharedSite; home: string; onUnlocked: () => void }) {
  usePageTitle("Shared dashboard");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    const password = ((event.currentTarget as HTMLFormElement).elements.namedItem("password") as HTMLInputElement).value;
    if (!password) return setError("Enter the password you were given with the link.");
    setBusy(true);
    try {
      await request<void>("POST", `${home}/api/unlock`, { password });
      onUnlocked();
    } catch (failure) {
      setBusy(false);
      setError(failure instanceof ApiError && failure.retryAfter ? `${failure.message}` : messageOf(failure));
    }
  };
  return (
    <div class="page shared-unlock">
      <h1>Shared dashboard: {site.name}</h1>
      <p class="shared-unlock-intro">
        The analytics of <strong>{site.domain}</strong> (visitors, pages, sources and more), shared read-only through this link. Its owner
        protected it with a password: enter the one you were given with the link to open the dashboard.
      </p>
      <form class="panel shared-unlock-form" onSubmit={submit} noValidate>
        <Field id="share-password" name="password" label="Password" type="password" autocomplete="current-password" required maxLength={1024} autoFocus error={error} />
        <button type="submit" class="button button-primary" disabled={busy}>
          {busy ? "Opening…" : "Open dashboard"}
        </button>
      </form>
    </div>
  );
}
