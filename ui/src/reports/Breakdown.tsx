// One breakdown panel: tabs over related dimensions, a table of the top rows, click a row to filter.
import { useEffect, useState } from "preact/hooks";

import { messageOf } from "../api";
import { count } from "../format";
import { reports, type Breakdown as BreakdownData, type FilterName, type ReportQuery, type Row } from "./api";
import { duration } from "./figures";

export interface Tab {
  dimension: string;
  label: string;
  /** The filter a click on a row sets, if any. */
  filter?: FilterName;
  columns: { key: keyof Row; label: string }[];
}

interface Props {
  title: string;
  tabs: Tab[];
  siteId: number;
  query: ReportQuery;
  onFilter: (name: FilterName, value: string) => void;
  /** Custom events: a click shows the event's props instead of filtering at once. */
  props?: boolean;
}

const percent = new Intl.NumberFormat(undefined, { style: "percent", maximumFractionDigits: 1 });

function cell(key: keyof Row, row: Row): string {
  const value = row[key];
  if (typeof value !== "number") return String(value ?? "");
  if (key === "bounce_rate") return percent.format(value);
  if (key === "visit_duration") return duration(value);
  return count(value);
}

export function label(dimension: string, value: string): string {
  if (value === "(none)") return dimension === "sources" ? "Direct / none" : "Unknown";
  return value;
}

export function BreakdownPanel({ title, tabs, siteId, query, onFilter, props }: Props) {
  const [tab, setTab] = useState(0);
  const [data, setData] = useState<BreakdownData | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [event, setEvent] = useState<string | null>(null);
  const current = tabs[tab];
  const key = JSON.stringify(query);

  useEffect(() => {
    let alive = true;
    setError(null);
    reports.breakdown(siteId, query, event ? "props" : current.dimension, event ?? undefined).then(
      (result) => alive && setData(result),
      (failure) => alive && setError(messageOf(failure)),
    );
    return () => {
      alive = false;
    };
  }, [siteId, key, current.dimension, event]);

  const columns = event
    ? [
        { key: "visitors" as keyof Row, label: "Visitors" },
        { key: "events" as keyof Row, label: "Events" },
      ]
    : current.columns;
  const id = `breakdown-${current.dimension}`;
  return (
    <section class="panel report-panel" aria-labelledby={`${id}-title`}>
      <div class="report-panel-head">
        <h2 id={`${id}-title`}>{event ? `${title}: ${event}` : title}</h2>
        {tabs.length > 1 && !event && (
          <div class="segmented" role="group" aria-label={`${title}: what to show`}>
            {tabs.map((t, i) => (
              <button key={t.dimension} type="button" aria-pressed={i === tab} onClick={() => setTab(i)}>
                {t.label}
              </button>
            ))}
          </div>
        )}
        {event && (
          <button type="button" class="button button-quiet" onClick={() => setEvent(null)}>
            All events
          </button>
        )}
      </div>
      {error && <p class="report-error" role="alert">{error}</p>}
      {data && data.rows.length === 0 && <p class="report-empty">No data for this period.</p>}
      {data && data.rows.length > 0 && (
        <table class="report-table" data-dimension={event ? "props" : current.dimension}>
          <caption class="visually-hidden">
            {event ? `Props of ${event}` : `${title}: ${current.label}`}
          </caption>
          <thead>
            <tr>
              <th scope="col">{event ? "Prop" : current.label}</th>
              {columns.map((c) => (
                <th key={c.key} scope="col" class="num">
                  {c.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {data.rows.map((row) => {
              const shown = event ? `${row.key}: ${row.value}` : label(current.dimension, row.value);
              const clickable = !event && (current.filter || props);
              const onClick = () => {
                if (props) setEvent(row.value);
                else if (current.filter) onFilter(current.filter, row.value);
              };
              return (
                <tr key={`${row.key ?? ""}${row.value}`}>
                  <th scope="row" class="report-value">
                    {clickable ? (
                      <button
                        type="button"
                        class="link-button"
                        onClick={onClick}
                        title={props ? `Show the props of ${shown}` : `Filter by ${shown}`}
                      >
                        {shown}
                      </button>
                    ) : (
                      <span>{shown}</span>
                    )}
                    {props && !event && current.filter && (
                      <button
                        type="button"
                        class="link-button report-filter"
                        onClick={() => onFilter("event", row.value)}
                        aria-label={`Filter by the event ${shown}`}
                      >
                        Filter
                      </button>
                    )}
                  </th>
                  {columns.map((c) => (
                    <td key={c.key} class="num">
                      {cell(c.key, row)}
                    </td>
                  ))}
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {!data && !error && <p class="loading">Loading…</p>}
    </section>
  );
}
