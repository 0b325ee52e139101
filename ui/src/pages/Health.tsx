import { ApiError, api, type Health, type ServiceStatus } from "../api";
import { Badge } from "../components/Badge";
import { Notice } from "../components/Notice";
import { Page } from "../components/Page";
import { bytes, count, dateTime, label, milliseconds, timeAgo } from "../format";
import { useAutoRefresh, useResource } from "../hooks";

const REFRESH_MS = 30_000;

const OVERALL: Record<ServiceStatus, string> = {
  ok: "Every service works normally.",
  degraded: "Sightline works, but at least one service needs attention.",
  down: "A service Sightline cannot work without is down.",
};

const SERVICE_NAMES: Record<string, string> = {
  database: "Database",
  disk: "Disk",
  ingest: "Event ingest",
  recordings: "Recordings",
  store: "Analytics store",
  retention: "Data retention",
  recording_retention: "Recordings retention",
  mail: "E-mail reports",
};

/** Figures a service reports to explain itself: shown as sentences, not in the list. */
const EXPLAINED = new Set(["problem", "fix", "failing_since", "advice"]);

interface Explained {
  name: string;
  title: string;
  status: ServiceStatus;
  problem: string;
  fix: string | null;
  since: string | null;
}

/** Every service that is not OK, with the cause and the fix it reports in plain words. */
export function problemsOf(report: Health): Explained[] {
  return Object.entries(report.services)
    .filter(([, service]) => service.status !== "ok")
    .map(([name, service]) => ({
      name,
      title: SERVICE_NAMES[name] ?? label(name),
      status: service.status,
      problem:
        typeof service.problem === "string" && service.problem
          ? service.problem
          : service.status === "down"
            ? "This service does not answer."
            : "This service needs attention.",
      fix: typeof service.fix === "string" && service.fix ? service.fix : null,
      since: typeof service.failing_since === "string" ? service.failing_since : null,
    }));
}

const FIGURE_LABELS: Record<string, string> = {
  space: "Database file",
  file_bytes: "Size",
  auto_vacuum: "Auto-vacuum",
  free_bytes: "Free space",
  total_bytes: "Disk size",
  round_trip_ms: "Round trip",
  error: "Problem",
  last_error: "Last error",
  enabled: "Set up",
  pid: "Process id",
  writer_pid: "Writer's process id",
  writer_starts: "Writer starts",
  lag_events: "Events waiting",
  lag_seconds: "Waiting for",
  fed_events: "Events taken in",
  queue_depth: "Batches queued",
  queue_capacity: "Queue holds up to",
  accepted_events: "Events stored",
  accepted_batches: "Batches stored",
  duplicate_batches: "Batches sent twice (stored once)",
  failed_commits: "Failed writes",
  commits: "Writes",
  last_commit_ms: "Last write took",
  last_group_batches: "Batches in the last write",
};

const ENGINES: Record<string, string> = { sqlite: "SQLite", postgresql: "PostgreSQL" };

/** Whether a figure is an identifier (a process id), written as its digits alone. */
const isIdentifier = (key: string) => key === "pid" || key.endsWith("_pid") || key.endsWith("_id");

/** A moment as the API writes it (``2026-11-28T04:51:44+00:00``), whatever its key. */
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d/;

/** One figure of a service in words: sizes, durations, counts, engines, process ids. */
function figure(key: string, value: unknown): string {
  if (typeof value === "number") {
    if (isIdentifier(key)) return String(value);
    if (key.endsWith("_bytes")) return bytes(value);
    if (key.endsWith("_ms")) return milliseconds(value);
    if (key.endsWith("_seconds")) return milliseconds(value * 1000);
    return count(value);
  }
  if (typeof value === "boolean") return value ? "Yes" : "No";
  if (key === "engine" && typeof value === "string") return ENGINES[value] ?? value;
  if (typeof value === "string" && (key.endsWith("_at") || ISO_TIME.test(value)) && !Number.isNaN(Date.parse(value))) {
    return `${timeAgo(value)} (${dateTime(value)})`;
  }
  if (value === null || value === undefined) {
    if (key.endsWith("_at")) return "Never";
    if (key.endsWith("error")) return "None so far";
    return isIdentifier(key) ? "Not running" : "Not set";
  }
  if (Array.isArray(value)) return value.length === 0 ? "None so far" : value.map((item) => figure(key, item)).join(", ");
  // A state word (``catching_up``) reads as words; a path, an address or a sentence stays as it is.
  if (typeof value === "string") return /^[a-z0-9]+(_[a-z0-9]+)+$/.test(value) ? value.replace(/_/g, " ") : value;
  return JSON.stringify(value);
}

export function HealthPage() {
  const health = useResource(api.health);
  const { reload } = health;
  useAutoRefresh(reload, REFRESH_MS);

  const report = health.data;
  return (
    <Page
      title="Health"
      subtitle="The state of the services behind this Sightline, refreshed every 30 seconds."
      actions={
        <button type="button" class="button" onClick={() => void reload()} disabled={health.loading}>
          <span class="icon icon-refresh" aria-hidden="true" />
          {health.loading ? "Checking…" : "Check now"}
        </button>
      }
    >
      {health.failure instanceof ApiError && health.failure.status === 503 ? (
        <DatabaseDown message={health.failure.message} />
      ) : (
        health.error && <Notice kind="error">{health.error}</Notice>
      )}
      {!report && !health.error && <p class="loading">Checking the services…</p>}
      {report && <HealthReport report={report} />}
    </Page>
  );
}

function HealthReport({ report }: { report: Health }) {
  return (
    <>
      <section class={`panel overall overall-${report.status}`} aria-labelledby="overall-title">
        <div class="panel-head">
          <h2 id="overall-title">Overall</h2>
          <Badge state={report.status} large />
        </div>
        <p class="state-summary">{OVERALL[report.status] ?? report.status}</p>
        {problemsOf(report).length > 0 && (
          <ul class="problems">
            {problemsOf(report).map((p) => (
              <li key={p.name}>
                <strong>
                  {p.title}: {p.status === "down" ? "down" : "degraded"}.
                </strong>{" "}
                {p.problem}
                {p.since && (
                  <>
                    {" "}
                    Since <time dateTime={p.since}>{dateTime(p.since)}</time> ({timeAgo(p.since)}).
                  </>
                )}
                {p.fix && (
                  <>
                    <br />
                    <span class="problem-fix">What to do: {p.fix}</span>
                  </>
                )}
              </li>
            ))}
          </ul>
        )}
        <p class="field-hint">
          Version {report.version} · checked{" "}
          <time dateTime={report.checked_at} title={dateTime(report.checked_at)}>
            {timeAgo(report.checked_at)}
          </time>
        </p>
      </section>
      <div class="service-grid">
        {Object.entries(report.services).map(([name, service]) => {
          const { status, latency_ms: latency, ...figures } = service;
          const title = SERVICE_NAMES[name] ?? label(name);
          return (
            <section class="panel service" key={name} aria-labelledby={`service-${name}`} data-service={name}>
              <div class="panel-head">
                <h2 id={`service-${name}`}>{title}</h2>
                <Badge state={status} />
              </div>
              <dl class="figures">
                <div>
                  <dt>Probe time</dt>
                  <dd>{milliseconds(latency)}</dd>
                </div>
                {Object.entries(figures)
                  .filter(([key]) => !EXPLAINED.has(key))
                  .map(([key, value]) => (
                    <Figure key={key} name={key} value={value} />
                  ))}
              </dl>
              {typeof service.problem === "string" && service.problem && (
                <p class="service-problem">
                  {service.problem}
                  {typeof service.fix === "string" && service.fix && <> What to do: {service.fix}</>}
                </p>
              )}
              {typeof service.advice === "string" && service.advice && (
                <p class="service-advice">{service.advice}</p>
              )}
            </section>
          );
        })}
      </div>
    </>
  );
}

/** The health check itself could not run: the database is unreachable and the session unknown. */
function DatabaseDown({ message }: { message: string }) {
  return (
    <section class="panel overall overall-down" aria-labelledby="database-down-title">
      <div class="panel-head">
        <h2 id="database-down-title">Database: down</h2>
        <Badge state="down" large />
      </div>
      <p class="state-summary">{message}</p>
      <p>
        What to do: check that the database server named by <code>--database-url</code> is running and reachable
        from this server (for SQLite: that the disk of the data directory is mounted, writable and not full). Sightline
        reconnects by itself; this page checks again every 30 seconds. Visitors' events are refused with 503 meanwhile
        and the snippet sends them again later.
      </p>
    </section>
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** One figure; a group of figures (e.g. counts by reason) becomes an indented list. A group's
 * unit (``used_bytes``: bytes per entry) carries over to its figures. */
function Figure({ name, value, unit = "" }: { name: string; value: unknown; unit?: string }) {
  const title = FIGURE_LABELS[name] ?? label(name);
  if (!isRecord(value)) {
    return (
      <div>
        <dt>{title}</dt>
        <dd>{figure(name + unit, value)}</dd>
      </div>
    );
  }
  const innerUnit = name.endsWith("_bytes") ? "_bytes" : "";
  if (Object.keys(value).length === 0) {
    // An empty group (no chunk dropped for any reason yet) says so, instead of an empty row.
    return (
      <div>
        <dt>{title}</dt>
        <dd>None so far</dd>
      </div>
    );
  }
  return (
    <div class="nested">
      <dt>{title}</dt>
      <dd>
        <dl class="figures">
          {Object.entries(value).map(([key, inner]) => (
            <Figure key={key} name={key} value={inner} unit={innerUnit} />
          ))}
        </dl>
      </dd>
    </div>
  );
}
