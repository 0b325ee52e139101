// The responses of one revision: figures per question, and the CSV export batch by batch.
import { useLocation, useRoute } from "preact-iso/router";
import { useState } from "preact/hooks";

import { Notice } from "../components/Notice";
import { Page } from "../components/Page";
import { count, dateTime } from "../format";
import { useResource } from "../hooks";
import { exportUrl, type QuestionSummary, type Survey, surveysApi } from "./api";
import { StatusBadge } from "./Status";

export function ResponsesPage() {
  const { params } = useRoute();
  const id = Number(params.id);
  const survey = useResource(() => surveysApi.get(id));
  const back = { href: `/surveys/${id}`, label: "Back to the survey" };
  if (!survey.data) {
    return (
      <Page title="Responses" back={back}>
        {survey.error ? <Notice kind="error">{survey.error}</Notice> : <p class="loading">Loading the survey…</p>}
      </Page>
    );
  }
  return <Responses survey={survey.data} back={back} />;
}

function Responses({ survey, back }: { survey: Survey; back: { href: string; label: string } }) {
  const location = useLocation();
  const asked = Number.parseInt(location.query.revision ?? "", 10);
  const published = survey.revisions.map((r) => r.revision);
  const latestWithResponses = [...survey.revisions].reverse().find((r) => r.responses > 0)?.revision;
  const revision = published.includes(asked) ? asked : (latestWithResponses ?? survey.revision);
  return (
    <Page
      title={`Responses: ${survey.name}`}
      back={back}
      subtitle={
        <>
          <StatusBadge status={survey.status} />
          <span>{count(survey.responses)} responses in all</span>
        </>
      }
    >
      {revision === null ? (
        <div class="panel empty">
          <p>This survey has not been published yet, so it has no responses.</p>
        </div>
      ) : (
        <>
          <div class="recordings-site sv-picker">
            <label for="responses-revision">Revision</label>
            <select
              id="responses-revision"
              value={revision}
              onChange={(e) => location.route(`/surveys/${survey.id}/responses?revision=${(e.target as HTMLSelectElement).value}`)}
            >
              {[...survey.revisions].reverse().map((r) => (
                <option key={r.revision} value={r.revision}>
                  Revision {r.revision}
                  {survey.status === "published" && r.revision === survey.revision ? " (live)" : ""} – {count(r.responses)} responses
                </option>
              ))}
            </select>
          </div>
          <Export key={`export-${revision}`} surveyId={survey.id} revision={revision} />
          <SummaryView key={`summary-${revision}`} surveyId={survey.id} revision={revision} />
        </>
      )}
    </Page>
  );
}

function Export({ surveyId, revision }: { surveyId: number; revision: number }) {
  const [offset, setOffset] = useState(0);
  return (
    <section class="panel sv-export" aria-labelledby="sv-export-title">
      <h2 id="sv-export-title">Export</h2>
      <p class="field-hint">
        CSV files of up to 1000 responses each, in the order they arrived, with one column per question of revision {revision}.
      </p>
      <Batch key={offset} surveyId={surveyId} revision={revision} offset={offset} onGo={setOffset} />
    </section>
  );
}

function Batch(props: { surveyId: number; revision: number; offset: number; onGo: (offset: number) => void }) {
  const { surveyId, revision, offset, onGo } = props;
  const batch = useResource(() => surveysApi.batch(surveyId, revision, offset));
  const data = batch.data;
  const next = data?.next ?? null;
  return (
    <>
      {batch.error && <Notice kind="error">{batch.error}</Notice>}
      <p class="sv-batch" aria-live="polite">
        {data
          ? data.rows === 0
            ? offset === 0
              ? `No responses to revision ${revision} yet: its CSV can be downloaded once the first arrives.`
              : `No responses from number ${count(offset + 1)} on.`
            : `Batch of responses ${count(offset + 1)} to ${count(offset + data.rows)}.`
          : "Checking the batch…"}
      </p>
      <div class="panel-actions">
        {!(data && data.rows === 0 && offset === 0) && (
          <a class="button button-primary" href={exportUrl(surveyId, revision, offset)} download>
            Download CSV{offset > 0 ? ` from response ${count(offset + 1)}` : ""}
          </a>
        )}
        {offset > 0 && (
          <button type="button" class="button" onClick={() => onGo(Math.max(0, offset - 1000))}>
            Previous batch
          </button>
        )}
        {next !== null && (
          <button type="button" class="button" onClick={() => onGo(next)}>
            Next batch
          </button>
        )}
      </div>
    </>
  );
}

function SummaryView({ surveyId, revision }: { surveyId: number; revision: number }) {
  const summary = useResource(() => surveysApi.summary(surveyId, revision));
  if (summary.error) return <Notice kind="error">{summary.error}</Notice>;
  if (!summary.data) return <p class="loading">Loading the summary…</p>;
  const data = summary.data;
  return (
    <section class="sv-summary" aria-labelledby="sv-summary-title">
      <h2 id="sv-summary-title">Summary of revision {data.revision}</h2>
      <p class="field-hint">
        {count(data.responses)} {data.responses === 1 ? "response" : "responses"}
        {data.last_submitted_at && `, the latest ${dateTime(data.last_submitted_at)}`}
        {data.summarized < data.responses && `; figures cover the latest ${count(data.summarized)}`}.
      </p>
      {data.responses === 0 ? (
        // Said once for the revision, not as a row of empty bars under every question.
        <div class="panel empty">
          <p>No visitor has answered revision {data.revision} yet. Answers appear here as they arrive; the survey shows on the pages its targeting names.</p>
        </div>
      ) : (
        <div class="sv-summary-grid">
          {data.questions.map((question) => (
            <QuestionCard key={question.id} question={question} />
          ))}
        </div>
      )}
    </section>
  );
}

function Bars({ rows, total, label }: { rows: { key: string; label: string; count: number }[]; total: number; label: string }) {
  // Each bar is its answer's share of the responses, as the percentage beside it says.
  const whole = Math.max(1, total, ...rows.map((r) => r.count));
  return (
    <table class="report-table sv-bars" aria-label={label}>
      <thead>
        <tr>
          <th scope="col">Answer</th>
          <th scope="col" class="num">
            Responses
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.key}>
            <th scope="row">
              <span class="sv-bar-label">{row.label}</span>
              <meter class="sv-bar" min={0} max={whole} value={row.count} aria-hidden="true" />
            </th>
            <td class="num">
              {count(row.count)}
              <span class="sv-share">{total ? ` (${Math.round((row.count / total) * 100)}%)` : ""}</span>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function QuestionCard({ question }: { question: QuestionSummary }) {
  return (
    <article class="panel sv-card" data-question={question.id}>
      <h3>{question.title}</h3>
      <p class="field-hint">
        {count(question.answered)} answered
        {question.type === "rating" && question.average !== null && (
          <>
            {" · "}
            <strong class="sv-average">Average {question.average.toFixed(1)}</strong> on {question.scale}
          </>
        )}
      </p>
      {question.type === "rating" && (
        <Bars
          label={`Ratings of ${question.title}`}
          total={question.answered}
          rows={question.distribution.map((d) => ({ key: String(d.value), label: String(d.value), count: d.count }))}
        />
      )}
      {(question.type === "single_choice" || question.type === "multiple_choice") && (
        <Bars
          label={`Choices of ${question.title}`}
          total={question.answered}
          rows={question.options.map((o) => ({ key: o.id, label: o.label, count: o.count }))}
        />
      )}
      {question.type === "text" &&
        (question.latest.length === 0 ? (
          <p class="empty">No answers yet.</p>
        ) : (
          <ul class="sv-texts" aria-label={`Latest answers to ${question.title}`}>
            {question.latest.map((t) => (
              <li key={t.response_id}>
                <p class="sv-text">{t.text}</p>
                <span class="sv-text-time">{dateTime(t.submitted_at)}</span>
              </li>
            ))}
          </ul>
        ))}
    </article>
  );
}
