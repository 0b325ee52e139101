// The dashboard's Goals panel: every goal of the site with its converting visitors, conversions,
// conversion rate and revenue (one request, one query on the store); a click filters by the goal.
import { useEffect, useState } from "preact/hooks";

import { messageOf } from "../api";
import { count } from "../format";
import { reports, type Breakdown, type ReportQuery } from "./api";

const percent = new Intl.NumberFormat(undefined, { style: "percent", maximumFractionDigits: 1 });

function money(amount: number, currency: string): string {
  try {
    return new Intl.NumberFormat(undefined, { style: "currency", currency }).format(amount);
  } catch {
    return `${amount.toFixed(2)} ${currency}`;
  }
}

interface Props {
  siteId: number;
  query: ReportQuery;
  onFilter: (goalId: string) => void;
  /** Links to the site's settings (not on a shared dashboard). */
  manage?: boolean;
}

export function GoalsPanel({ siteId, query, onFilter, manage = true }: Props) {
  const [data, setData] = useState<Breakdown | null>(null);
  const [error, setError] = useState<string | null>(null);
  const key = JSON.stringify(query);
  useEffect(() => {
    let alive = true;
    setError(null);
    reports.breakdown(siteId, query, "goal", undefined, { limit: 100 }).then(
      (result) => alive && setData(result),
      (failure) => alive && setError(`${messageOf(failure)} Reload the page to try again.`),
    );
    return () => {
      alive = false;
    };
  }, [siteId, key]);
  const withRevenue = data?.rows.some((row) => row.revenue) ?? false;
  return (
    <section class="panel report-panel report-goals" aria-labelledby="goals-panel-title">
      <div class="report-panel-head">
        <h2 id="goals-panel-title">Goals</h2>
        {manage && (
          <a class="button button-quiet" href={`/sites/${siteId}/settings#goals`}>
            Manage goals
          </a>
        )}
      </div>
      {error && <p class="report-error" role="alert">{error}</p>}
      {data && data.rows.length === 0 && (
        <p class="report-empty">
          No goals yet.{" "}
          {manage && (
            <>
              <a href={`/sites/${siteId}/settings#goals`}>Add a goal</a> to count conversions: a page visited or an event sent.
            </>
          )}
        </p>
      )}
      {data && data.rows.length > 0 && (
        // On a phone the figures keep their width and the table scrolls sideways in its panel.
        <div class="table-scroll goals-scroll" tabIndex={0} role="region" aria-label="Goals">
        <table class={`report-table goals-figures card-table${withRevenue ? " with-revenue" : ""}`} data-dimension="goals">
          <caption class="visually-hidden">Goals: converting visitors, conversions, conversion rate{withRevenue ? " and revenue" : ""}</caption>
          <thead>
            <tr>
              <th scope="col">Goal</th>
              <th scope="col" class="num">Visitors</th>
              <th scope="col" class="num">Conversions</th>
              <th scope="col" class="num report-rate">Rate</th>
              {withRevenue && <th scope="col" class="num">Revenue</th>}
              {withRevenue && <th scope="col" class="num">Average</th>}
            </tr>
          </thead>
          <tbody>
            {data.rows.map((row) => (
              <tr key={row.goal_id}>
                <th scope="row" class="report-value">
                  <span class="report-bar" style={{ width: `${((row.conversion_rate ?? 0) * 100).toFixed(1)}%` }} aria-hidden="true" />
                  <button type="button" class="link-button" title={`Filter by ${row.value}`} onClick={() => onFilter(String(row.goal_id))}>
                    {row.value}
                  </button>
                </th>
                <td class="num" data-label="Visitors">{count(row.visitors ?? 0)}</td>
                <td class="num" data-label="Conversions">{count(row.conversions ?? 0)}</td>
                <td class="num" data-label="Rate">{percent.format(row.conversion_rate ?? 0)}</td>
                {withRevenue && <td class="num" data-label="Revenue">{row.revenue ? money(row.revenue.total, row.revenue.currency) : ""}</td>}
                {withRevenue && <td class="num" data-label="Average">{row.revenue ? money(row.revenue.average, row.revenue.currency) : ""}</td>}
              </tr>
            ))}
          </tbody>
        </table>
        </div>
      )}
      {!data && !error && <p class="loading">Loading…</p>}
    </section>
  );
}
