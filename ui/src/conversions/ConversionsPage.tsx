// Funnels, retention and journeys of one site, for the range and filters of the reports page.
import { useLocation, useRoute } from "preact-iso/router";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";

import { api, messageOf } from "../api";
import { formMessage } from "../formMessages";
import { goals as goalsApi } from "../goals/api";
import { Notice } from "../components/Notice";
import { Page } from "../components/Page";
import { count, counted, day } from "../format";
import { useResource } from "../hooks";
import { useCanChange } from "../user";
import { parseQuery, queryParams, type FilterName, type ReportQuery } from "../reports/api";
import { label } from "../reports/Breakdown";
import { filtersSentence } from "../reports/filterText";
import { FUNNEL_SPLITS } from "../reports/dimensions.gen";
import { duration } from "../reports/figures";
import { Controls } from "../reports/PeriodControls";
import { SPAN_RANGES } from "../reports/ranges";
import { StepSuggestions, suggestionsId } from "./Suggestions";
import { conversions, stepText, type FunnelAnswer, type FunnelStep, type JourneysAnswer, type RetentionAnswer } from "./api";

const percent = new Intl.NumberFormat(undefined, { style: "percent", maximumFractionDigits: 1 });
const SPLITS: { value: string; label: string }[] = [{ value: "", label: "No breakdown" }, ...FUNNEL_SPLITS];

export function ConversionsPage() {
  const { params } = useRoute();
  return <SiteConversions key={params.id} siteId={Number(params.id)} />;
}

function SiteConversions({ siteId }: { siteId: number }) {
  const location = useLocation();
  const query = useMemo(() => parseQuery(location.url.split("?")[1] ?? ""), [location.url]);
  const site = useResource(() => api.site(siteId));
  // The console's one period menu, without realtime and without a comparison (none is shown here).
  const setPeriod = (next: ReportQuery) => location.route(`/sites/${siteId}/conversions?${queryParams({ ...next, compare: false })}`, true);
  const filters = Object.entries(query.filters) as [FilterName, string][];
  // A goal filter reads as the goal's name, as on the reports page's chips.
  const siteGoals = useResource(() => (filters.some(([name]) => name === "goal") ? goalsApi.list(siteId) : Promise.resolve([])));
  const goalNames = useMemo(() => new Map((siteGoals.data ?? []).map((g) => [String(g.id), g.name])), [siteGoals.data]);
  const name = site.data?.name ?? "…";
  return (
    <Page title={`Conversions: ${name}`} back={{ href: `/sites/${siteId}/reports?${queryParams(query)}`, label: `Reports: ${name}` }}>
      {site.error && <Notice kind="error">{site.error}</Notice>}
      <Controls key={site.data?.timezone ?? ""} query={query} onChange={setPeriod} timezone={site.data?.timezone ?? "UTC"} ranges={SPAN_RANGES} comparable={false} />
      {filters.length > 0 && (
        <p class="report-note">
          Filtered: {filtersSentence(filters, goalNames)} (<a href={`/sites/${siteId}/reports?${queryParams(query)}`}>change on the reports page</a>)
        </p>
      )}
      <StepSuggestions siteId={siteId} query={query} />
      <FunnelPanel siteId={siteId} query={query} />
      <RetentionPanel siteId={siteId} query={query} />
      <JourneysPanel siteId={siteId} query={query} />
    </Page>
  );
}

interface StepDraft {
  kind: "page" | "event";
  value: string;
}

function stepOf(draft: StepDraft): string {
  return `${draft.kind}:${draft.value.trim()}`;
}

function draftOf(step: string): StepDraft {
  return step.startsWith("event:") ? { kind: "event", value: step.slice(6) } : { kind: "page", value: step.slice(5) };
}

function FunnelPanel({ siteId, query }: { siteId: number; query: ReportQuery }) {
  const [steps, setSteps] = useState<StepDraft[]>([
    { kind: "page", value: "/" },
    { kind: "page", value: "" },
  ]);
  const [split, setSplit] = useState("");
  const [answer, setAnswer] = useState<FunnelAnswer | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [saveName, setSaveName] = useState("");
  const [note, setNote] = useState<string | null>(null);
  const saved = useResource(() => conversions.funnels(siteId));
  // A viewer opens saved funnels but may not save one: the form is left out.
  const canChange = useCanChange();
  const key = JSON.stringify(query);

  const run = async (drafts = steps) => {
    const filled = drafts.filter((d) => d.value.trim());
    if (filled.length < 2) {
      setError("Give at least two steps: a page path such as /pricing, or an event name.");
      return;
    }
    setBusy(true);
    setError(null);
    try {
      setAnswer(await conversions.funnel(siteId, query, filled.map(stepOf), split || undefined));
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => {
    if (answer) void run();
  }, [key, split]);

  const save = async () => {
    setNote(null);
    try {
      const made = await conversions.saveFunnel(siteId, saveName.trim(), steps.filter((d) => d.value.trim()).map(stepOf));
      setNote(`The funnel "${made.name}" is saved.`);
      setSaveName("");
      void saved.reload();
    } catch (failure) {
      setError(formMessage("funnel", failure));
    }
  };
  const set = (i: number, change: Partial<StepDraft>) => setSteps(steps.map((s, j) => (j === i ? { ...s, ...change } : s)));

  return (
    <section class="panel conversion-panel" aria-labelledby="funnel-title">
      <div class="report-panel-head">
        <h2 id="funnel-title">Funnel</h2>
        {saved.data && saved.data.length > 0 && (
          <label class="inline-select">
            Saved funnels
            <select
              value=""
              onChange={(e) => {
                const chosen = saved.data?.find((f) => String(f.id) === e.currentTarget.value);
                if (chosen) {
                  const drafts = chosen.steps.map(draftOf);
                  setSteps(drafts);
                  void run(drafts);
                }
              }}
            >
              <option value="">Open a saved funnel…</option>
              {saved.data.map((f) => (
                <option key={f.id} value={String(f.id)}>
                  {f.name}
                </option>
              ))}
            </select>
          </label>
        )}
      </div>
      <p class="field-hint">Visitors who did each step in order within one visit. A page path may use * (within a segment) and ** (across).</p>
      <form
        class="funnel-form"
        aria-label="Funnel steps"
        onSubmit={(e) => {
          e.preventDefault();
          void run();
        }}
      >
        <ol class="funnel-steps">
          {steps.map((s, i) => (
            <li key={i}>
              <label>
                <span class="visually-hidden">Step {i + 1} kind</span>
                <select value={s.kind} onChange={(e) => set(i, { kind: e.currentTarget.value as StepDraft["kind"] })}>
                  <option value="page">Page</option>
                  <option value="event">Event</option>
                </select>
              </label>
              <label>
                <span class="visually-hidden">Step {i + 1}</span>
                <input
                  type="text"
                  value={s.value}
                  placeholder={s.kind === "page" ? "/pricing" : "signup"}
                  list={suggestionsId(siteId, s.kind)}
                  autoComplete="off"
                  maxLength={2000}
                  onInput={(e) => set(i, { value: e.currentTarget.value })}
                />
              </label>
              {steps.length > 2 && (
                <button type="button" class="icon-button" aria-label={`Remove step ${i + 1}`} onClick={() => setSteps(steps.filter((_, j) => j !== i))}>
                  ×
                </button>
              )}
            </li>
          ))}
        </ol>
        <div class="form-actions">
          {steps.length < 8 && (
            <button type="button" class="button button-quiet" onClick={() => setSteps([...steps, { kind: "page", value: "" }])}>
              Add a step
            </button>
          )}
          <label class="inline-select">
            Breakdown
            <select value={split} onChange={(e) => setSplit(e.currentTarget.value)}>
              {SPLITS.map((s) => (
                <option key={s.value} value={s.value}>
                  {s.label}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" class="button" disabled={busy}>
            Show the funnel
          </button>
        </div>
      </form>
      {error && <p class="report-error" role="alert">{error}</p>}
      {answer && (
        <>
          <FunnelChart steps={answer.steps} title="All visitors" />
          {answer.breakdown?.map((part) => (
            <FunnelChart key={part.value} steps={part.steps} title={label(answer.dimension ?? split, part.value)} compact />
          ))}
          {canChange && (
          <form
            class="inline-form"
            onSubmit={(e) => {
              e.preventDefault();
              void save();
            }}
          >
            <label>
              Save as
              <input type="text" value={saveName} maxLength={100} placeholder="Signup funnel" onInput={(e) => setSaveName(e.currentTarget.value)} />
            </label>
            <button type="submit" class="button button-quiet" disabled={!saveName.trim()}>
              Save the funnel
            </button>
          </form>
          )}
          {note && <Notice kind="success">{note}</Notice>}
        </>
      )}
    </section>
  );
}

/** Bars as wide as each step's share of the first step, with the drop-off and the time taken. */
function FunnelChart({ steps, title, compact }: { steps: FunnelStep[]; title: string; compact?: boolean }) {
  return (
    <figure class={`funnel-chart${compact ? " funnel-compact" : ""}`}>
      <figcaption>{title}</figcaption>
      <div class="table-scroll" tabIndex={0} role="region" aria-label={`Funnel: ${title}`}>
      <table class="report-table funnel-table card-table">
        <thead>
          <tr>
            <th scope="col">Step</th>
            <th scope="col" class="num">Visitors</th>
            <th scope="col" class="num">From first</th>
            <th scope="col" class="num">From previous</th>
            <th scope="col" class="num">Dropped</th>
            <th scope="col" class="num">Median time</th>
          </tr>
        </thead>
        <tbody>
          {steps.map((s, i) => (
            <tr key={i} data-step={i + 1}>
              <th scope="row" class="report-value">
                <span class="report-bar funnel-bar" style={{ width: `${(s.conversion_rate * 100).toFixed(1)}%` }} aria-hidden="true" />
                <span>
                  {i + 1}. {stepText(s.label)}
                </span>
              </th>
              <td class="num" data-label="Visitors">{count(s.visitors)}</td>
              <td class="num" data-label="From first">{percent.format(s.conversion_rate)}</td>
              <td class="num" data-label="From previous">{i === 0 ? "–" : percent.format(s.step_conversion_rate)}</td>
              <td class="num" data-label="Dropped">{i === 0 ? "–" : count(s.dropoff)}</td>
              <td class="num" data-label="Median time">{s.median_seconds === null ? "–" : duration(s.median_seconds)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      </div>
    </figure>
  );
}

function RetentionPanel({ siteId, query }: { siteId: number; query: ReportQuery }) {
  const [interval, setInterval] = useState<"week" | "day">("week");
  const [periods, setPeriods] = useState(8);
  const [answer, setAnswer] = useState<RetentionAnswer | null>(null);
  const [error, setError] = useState<string | null>(null);
  const key = JSON.stringify(query);
  const wide: ReportQuery = interval === "week" && query.range !== "custom" ? { ...query, range: "30d" } : query;
  useEffect(() => {
    let alive = true;
    setError(null);
    conversions.retention(siteId, wide, interval, periods).then(
      (r) => alive && setAnswer(r),
      (failure) => alive && setError(messageOf(failure)),
    );
    return () => {
      alive = false;
    };
  }, [siteId, key, interval, periods]);
  const columns = Array.from({ length: periods }, (_, i) => i);
  return (
    <section class="panel conversion-panel" aria-labelledby="retention-title">
      <div class="report-panel-head">
        <h2 id="retention-title">Retention</h2>
        <div class="form-actions">
          <label class="inline-select">
            Cohorts by
            <select value={interval} onChange={(e) => setInterval(e.currentTarget.value as "week" | "day")}>
              <option value="week">Week</option>
              <option value="day">Day</option>
            </select>
          </label>
          <label class="inline-select">
            Periods
            <select value={String(periods)} onChange={(e) => setPeriods(Number(e.currentTarget.value))}>
              {[4, 6, 8, 10, 12].map((n) => (
                <option key={n} value={String(n)}>
                  {n}
                </option>
              ))}
            </select>
          </label>
        </div>
      </div>
      <p class="field-hint">
        Visitors grouped by the {interval} of their first visit, and the share who came back in each following {interval}
        {interval === "week" && query.range !== "custom" ? " (cohorts of the last 30 days)" : ""}.
      </p>
      {error && <p class="report-error" role="alert">{error}</p>}
      {answer && answer.cohorts.length > 0 && (
        <div class="table-scroll" tabIndex={0} role="region" aria-label={`Retention by ${interval}`}>
          <table class="retention-table card-table">
            <caption class="visually-hidden">Retention by {interval}</caption>
            <thead>
              <tr>
                <th scope="col">Cohort</th>
                <th scope="col" class="num">Visitors</th>
                {columns.map((i) => (
                  <th key={i} scope="col" class="num">
                    {interval === "week" ? "Week" : "Day"} {i}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {answer.cohorts.map((c) => (
                <tr key={c.start}>
                  <th scope="row"><time dateTime={c.start}>{day(c.start)}</time></th>
                  <td class="num" data-label="Visitors">{count(c.visitors)}</td>
                  {c.visitors === 0 ? (
                    // An empty cohort says so once, instead of a row of dashes.
                    <td colSpan={columns.length} class="retention-empty">
                      No new visitors {interval === "week" ? "this week" : "this day"}
                    </td>
                  ) : (
                    columns.map((i) =>
                    i < c.returning.length ? (
                      <td key={i} class="num retention-cell" data-label={`${interval === "week" ? "Week" : "Day"} ${i}`} style={{ "--share": String(c.returning[i]) }}>
                        {c.visitors ? percent.format(c.returning[i]) : "–"}
                      </td>
                    ) : (
                      <td key={i} class="retention-future" aria-label="not yet" />
                    ),
                    )
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {!answer && !error && <p class="loading">Loading…</p>}
    </section>
  );
}

function JourneysPanel({ siteId, query }: { siteId: number; query: ReportQuery }) {
  const [start, setStart] = useState<StepDraft>({ kind: "page", value: "/" });
  const [direction, setDirection] = useState<"next" | "previous">("next");
  const [depth, setDepth] = useState(3);
  const [answer, setAnswer] = useState<JourneysAnswer | null>(null);
  const [error, setError] = useState<string | null>(null);
  const key = JSON.stringify(query);
  // Calls are numbered: an answer older than the last call asked (the first load's, arriving after
  // the owner's own Show) never replaces the newer one.
  const calls = useRef(0);
  const run = async () => {
    if (!start.value.trim()) {
      setError("Give a page path or an event name to start from.");
      return;
    }
    const call = ++calls.current;
    setError(null);
    try {
      const found = await conversions.journeys(siteId, query, stepOf(start), direction, depth);
      if (call === calls.current) setAnswer(found);
    } catch (failure) {
      if (call === calls.current) setError(formMessage("journey", failure));
    }
  };
  useEffect(() => {
    void run();
  }, [key, direction, depth]);
  const top = answer?.paths[0]?.visitors ?? 0;
  return (
    <section class="panel conversion-panel" aria-labelledby="journeys-title">
      <div class="report-panel-head">
        <h2 id="journeys-title">Journeys</h2>
      </div>
      <form
        class="funnel-form form-actions"
        aria-label="Journeys from"
        onSubmit={(e) => {
          e.preventDefault();
          void run();
        }}
      >
        <label class="inline-select">
          From
          <select value={start.kind} onChange={(e) => setStart({ ...start, kind: e.currentTarget.value as StepDraft["kind"] })}>
            <option value="page">Page</option>
            <option value="event">Event</option>
          </select>
        </label>
        <label class="inline-select">
          <span class="visually-hidden">Start</span>
          <input
            type="text"
            value={start.value}
            maxLength={2000}
            list={suggestionsId(siteId, start.kind)}
            autoComplete="off"
            onInput={(e) => setStart({ ...start, value: e.currentTarget.value })}
          />
        </label>
        <label class="inline-select">
          Show
          <select value={direction} onChange={(e) => setDirection(e.currentTarget.value as "next" | "previous")}>
            <option value="next">Next steps</option>
            <option value="previous">Previous steps</option>
          </select>
        </label>
        <label class="inline-select">
          Depth
          <select value={String(depth)} onChange={(e) => setDepth(Number(e.currentTarget.value))}>
            {[1, 2, 3].map((n) => (
              <option key={n} value={String(n)}>
                {n}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" class="button">
          Show
        </button>
      </form>
      {error && <p class="report-error" role="alert">{error}</p>}
      {answer && answer.paths.length === 0 && <p class="report-empty">No visit went on from {stepText(answer.start)} in this period.</p>}
      {answer && answer.paths.length > 0 && (
        <ol class="journey-paths" aria-label={`Most common ${direction} steps from ${stepText(answer.start)}`}>
          {answer.paths.map((p) => (
            <li key={p.steps.join("\u001f")} class="journey-path">
              <span class="report-bar" style={{ width: `${((p.visitors / top) * 100).toFixed(1)}%` }} aria-hidden="true" />
              <span class="journey-steps">
                {direction === "next" ? stepText(answer.start) : ""}
                {(direction === "next" ? p.steps : [...p.steps].reverse()).map((s, i) => (
                  <span key={i}>
                    {direction === "next" || i > 0 ? <span aria-hidden="true"> → </span> : null}
                    {stepText(s)}
                  </span>
                ))}
                {direction === "previous" ? (
                  <>
                    <span aria-hidden="true"> → </span>
                    {stepText(answer.start)}
                  </>
                ) : null}
              </span>
              <span class="journey-count">{counted(p.visitors, "visitor")}</span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
