// Every row of one breakdown in a dialog: search by value and page through the rows.
import type { ComponentChildren } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";

import { messageOf } from "../api";
import { Dialog } from "../components/Dialog";
import { count } from "../format";
import { reports, type Breakdown, type ReportQuery, type Row } from "./api";

/** Rows per page of the details view. */
export const PAGE_SIZE = 20;

interface Props {
  title: string;
  siteId: number;
  query: ReportQuery;
  dimension: string;
  name?: string;
  onClose: () => void;
  render: (rows: Row[]) => ComponentChildren;
}

export function BreakdownDetails({ title, siteId, query, dimension, name, onClose, render }: Props) {
  const [data, setData] = useState<Breakdown | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [search, setSearch] = useState("");
  const [page, setPage] = useState(0);

  useEffect(() => {
    let alive = true;
    reports.breakdown(siteId, query, dimension, name, reports.MAX_ROWS).then(
      (result) => alive && setData(result),
      (failure) => alive && setError(messageOf(failure)),
    );
    return () => {
      alive = false;
    };
  }, [siteId, JSON.stringify(query), dimension, name]);

  const found = useMemo(() => {
    const needle = search.trim().toLowerCase();
    const rows = data?.rows ?? [];
    return needle ? rows.filter((row) => `${row.key ?? ""} ${row.value}`.toLowerCase().includes(needle)) : rows;
  }, [data, search]);
  const pages = Math.max(1, Math.ceil(found.length / PAGE_SIZE));
  const shown = found.slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE);
  const first = found.length ? page * PAGE_SIZE + 1 : 0;

  return (
    <Dialog open title={title} onClose={onClose} wide>
      <div class="dialog-body report-details">
        <div class="report-details-search">
          <label for="details-search">Search</label>
          <input
            id="details-search"
            type="search"
            value={search}
            maxLength={200}
            autoComplete="off"
            onInput={(event) => {
              setSearch(event.currentTarget.value);
              setPage(0);
            }}
          />
        </div>
        {error && (
          <p class="report-error" role="alert">
            {error}
          </p>
        )}
        {!data && !error && <p class="loading">Loading…</p>}
        {data && found.length === 0 && (
          <p class="report-empty">{search.trim() ? `Nothing matches "${search.trim()}".` : "No data for this period."}</p>
        )}
        {data && found.length > 0 && render(shown)}
        {data && (
          <div class="report-pager">
            <p role="status" class="report-pager-status">
              {found.length === 0
                ? ""
                : `Rows ${count(first)}–${count(first + shown.length - 1)} of ${count(found.length)}${
                    search.trim() ? " found" : ""
                  }`}
            </p>
            <div class="report-pager-buttons">
              <button type="button" class="button" disabled={page === 0} onClick={() => setPage(page - 1)}>
                Previous
              </button>
              <button type="button" class="button" disabled={page >= pages - 1} onClick={() => setPage(page + 1)}>
                Next
              </button>
            </div>
          </div>
        )}
        {data?.more && (
          <p class="field-hint">
            This view holds the top {count(data.rows.length)} rows of the period; narrow the period or add a filter to
            see others.
          </p>
        )}
      </div>
    </Dialog>
  );
}
