// Every row of one breakdown in a dialog: search by value and page through the rows.
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";

import { messageOf } from "../api";
import { Dialog } from "../components/Dialog";
import { count } from "../format";
import { reports, type Breakdown, type HeatViewport, type ReportQuery, type Row } from "./api";
import { label } from "./Breakdown";
import { NAMED_CODES } from "./places";

/** Rows per page of the details view. */
export const PAGE_SIZE = 20;

/** Tables whose rows read as names made from codes (countries, languages): searched by the name shown. */
const BY_NAME = new Set(NAMED_CODES);
/** Every row such a table has (a few hundred at most), matched by name or code in the browser. */
async function byName(siteId: number, query: ReportQuery, dimension: string, text: string, page: number): Promise<Breakdown> {
  const rows: Row[] = [];
  let answer: Breakdown;
  do {
    answer = await reports.breakdown(siteId, query, dimension, undefined, { limit: 100, offset: rows.length });
    rows.push(...answer.rows);
  } while (answer.more && rows.length < 1000);
  const wanted = text.toLocaleLowerCase();
  const found = rows.filter((row) => `${label(dimension, row.value)}\u0000${row.value}`.toLocaleLowerCase().includes(wanted));
  const start = page * PAGE_SIZE;
  return { ...answer, rows: found.slice(start, start + PAGE_SIZE), more: found.length > start + PAGE_SIZE };
}

interface Props {
  title: string;
  siteId: number;
  query: ReportQuery;
  dimension: string;
  name?: string;
  /** A heatmap's clicked elements: only clicks in windows of this width class. */
  viewport?: HeatViewport;
  onClose: () => void;
  render: (rows: Row[]) => ComponentChildren;
}

export function BreakdownDetails({ title, siteId, query, dimension, name, viewport, onClose, render }: Props) {
  const [data, setData] = useState<Breakdown | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [search, setSearch] = useState("");
  // The search the server was asked for: typing waits for a pause of 250 ms.
  const [asked, setAsked] = useState("");
  const [page, setPage] = useState(0);
  const [loading, setLoading] = useState(true);

  // The page the shown rows are, so the status never pairs a new page number with old rows.
  const [shownPage, setShownPage] = useState(0);

  useEffect(() => {
    const wanted = search.trim();
    // On opening (and after a search is asked), nothing is waiting: the page the owner chose stays.
    if (wanted === asked) return;
    const timer = window.setTimeout(() => {
      setAsked(wanted);
      setPage(0);
    }, 250);
    return () => window.clearTimeout(timer);
  }, [search, asked]);

  useEffect(() => {
    let alive = true;
    setLoading(true);
    const asking =
      asked && BY_NAME.has(dimension)
        ? byName(siteId, query, dimension, asked, page)
        : reports.breakdown(siteId, query, dimension, name, { limit: PAGE_SIZE, offset: page * PAGE_SIZE, search: asked, viewport });
    asking
      .then(
        (result) => {
          if (!alive) return;
          setData(result);
          setShownPage(page);
          setError(null);
        },
        (failure) => alive && setError(messageOf(failure)),
      )
      .finally(() => alive && setLoading(false));
    return () => {
      alive = false;
    };
  }, [siteId, JSON.stringify(query), dimension, name, viewport, page, asked]);

  const shown = data?.rows ?? [];
  const first = shownPage * PAGE_SIZE + 1;

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
        {data && shown.length === 0 && (
          <p class="report-empty">{asked ? `Nothing matches "${asked}".` : "No data for this period."}</p>
        )}
        {data && shown.length > 0 && render(shown)}
        {data && (
          <div class="report-pager">
            <p role="status" class="report-pager-status">
              {shown.length === 0
                ? ""
                : `Rows ${count(first)}–${count(first + shown.length - 1)}${
                    data.more ? "" : ` of ${count(first + shown.length - 1)}`
                  }${asked ? ` containing "${asked}"` : ""}`}
            </p>
            <div class="report-pager-buttons">
              <button type="button" class="button" disabled={page === 0 || loading} onClick={() => setPage(page - 1)}>
                Previous
              </button>
              <button type="button" class="button" disabled={!data.more || loading} onClick={() => setPage(page + 1)}>
                Next
              </button>
            </div>
          </div>
        )}
      </div>
    </Dialog>
  );
}
