// What a value field suggests as the owner types: the site's own values of one table (pages,
// events, sources, countries...), from the breakdown API's `search` (values containing what was
// typed, any case), as a native <datalist> the browser shows under the field (keyboard-usable).
import { useEffect, useState } from "preact/hooks";

import { label } from "./Breakdown";
import { reports, type ReportQuery } from "./api";

/** The breakdown table holding each filter's values (props need an event: none). */
export { FILTER_TABLES } from "./dimensions.gen";

const SHOWN = 20;
const WHOLE = ["prop", "country"];
const PAUSE_MS = 200;

interface Props {
  /** The datalist's id, which the field names in its `list`. */
  id: string;
  siteId: number;
  /** The breakdown table; `prop` with `name` (the event) suggests its prop keys, or with `propKey`
   * the values of that key. */
  table: string;
  /** The text typed so far. */
  text: string;
  /** The period whose values are suggested (its filters are left out). */
  query: ReportQuery;
  name?: string;
  propKey?: string;
}

export function ValueSuggestions({ id, siteId, table, text, query, name, propKey }: Props) {
  const [options, setOptions] = useState<{ value: string; label?: string }[]>([]);
  const period = JSON.stringify([query.range, query.from, query.to]);
  const typed = text.trim().slice(0, 200);
  useEffect(() => {
    if (table === "prop" && !name) {
      setOptions([]);
      return;
    }
    let live = true;
    const timer = window.setTimeout(() => {
      const asked: ReportQuery = { ...query, filters: {}, compare: false };
      // A props table's rows are key and value, and a country is found by its name, which the API
      // does not hold: those are read whole (100 rows) and the browser matches what was typed.
      const whole = WHOLE.includes(table);
      const search = whole ? undefined : typed || undefined;
      reports.breakdown(siteId, asked, table, name, { limit: whole ? 100 : SHOWN, search }).then(
        (answer) => {
          if (!live) return;
          if (table !== "prop") {
            setOptions(answer.rows.map((row) => ({ value: row.value, label: label(table, row.value) })));
            return;
          }
          const found = answer.rows
            .filter((row) => propKey === undefined || row.key === propKey)
            .map((row) => (propKey === undefined ? (row.key ?? "") : row.value));
          setOptions([...new Set(found)].filter(Boolean).slice(0, SHOWN).map((value) => ({ value })));
        },
        () => undefined, // suggestions are a help: without them the field still takes any value
      );
    }, PAUSE_MS);
    return () => {
      live = false;
      window.clearTimeout(timer);
    };
  }, [siteId, table, name, propKey, typed, period]);
  return (
    <datalist id={id}>
      {options.map((option) => (
        <option key={option.value} value={option.value} label={option.label !== option.value ? option.label : undefined} />
      ))}
    </datalist>
  );
}
