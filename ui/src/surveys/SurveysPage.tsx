// The surveys of one site (chosen at the top): status, revision, responses; a new one.
import { type Site } from "../api";
import { Notice } from "../components/Notice";
import { Page } from "../components/Page";
import { SitePicker, useSiteChoice } from "../components/SitePicker";
import { count, timeAgo } from "../format";
import { useResource } from "../hooks";
import { surveysApi } from "./api";
import { revisionText, StatusBadge } from "./Status";
import { useCanChange } from "../user";

export function SurveysPage() {
  const canChange = useCanChange();
  const { sites, site } = useSiteChoice();
  const list = sites.data ?? [];

  return (
    <Page
      title="Surveys"
      subtitle="Short questions for visitors, shown by the SDK's feedback() on the pages you choose."
      actions={
        site &&
        canChange && (
          <a class="button button-primary" href={`/surveys/new?site=${site.id}`}>
            New survey
          </a>
        )
      }
    >
      {sites.error && <Notice kind="error">{sites.error}</Notice>}
      {sites.loading && !sites.data && <p class="loading">Loading sites…</p>}
      {sites.data && list.length === 0 && (
        <div class="panel empty">
          <p>
            Add a site first, then build its surveys. <a href="/sites">Go to sites</a>
          </p>
        </div>
      )}
      {site && (
        <>
          <SitePicker sites={list} current={site} path="/surveys" />
          <SiteSurveys key={site.id} site={site} />
        </>
      )}
    </Page>
  );
}

function SiteSurveys({ site }: { site: Site }) {
  const surveys = useResource(() => surveysApi.list(site.id));
  return (
    <section class="panel" aria-labelledby="surveys-title">
      <div class="panel-head">
        <h2 id="surveys-title">{site.name}</h2>
      </div>
      {surveys.error && <Notice kind="error">{surveys.error}</Notice>}
      {surveys.loading && !surveys.data && <p class="loading">Loading surveys…</p>}
      {surveys.data && surveys.data.length === 0 && (
        <p class="empty">
          No surveys yet. <a href={`/surveys/new?site=${site.id}`}>Build the first one</a>
        </p>
      )}
      {surveys.data && surveys.data.length > 0 && (
        <table class="report-table sv-table">
          <thead>
            <tr>
              <th scope="col">Survey</th>
              <th scope="col">Status</th>
              <th scope="col">Revision</th>
              <th scope="col" class="num">
                Responses
              </th>
            </tr>
          </thead>
          <tbody>
            {surveys.data.map((survey) => (
              <tr key={survey.id} data-survey={survey.id}>
                <th scope="row">
                  <a href={`/surveys/${survey.id}`}>{survey.name}</a>
                  <span class="sv-updated">Edited {timeAgo(survey.updated_at)}</span>
                </th>
                <td data-label="Status">
                  <StatusBadge status={survey.status} />
                </td>
                <td class="sv-revision-cell" data-label="Revision">{revisionText(survey)}</td>
                <td class="num" data-label="Responses">
                  {survey.revision !== null ? (
                    <a href={`/surveys/${survey.id}/responses`} aria-label={`${count(survey.responses)} responses to ${survey.name}`}>
                      {count(survey.responses)}
                    </a>
                  ) : (
                    count(survey.responses)
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
