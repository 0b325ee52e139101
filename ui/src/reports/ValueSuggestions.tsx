// What a value field suggests as the owner types: the site's own values of one table (pages,
// events, sources, countries...), from the breakdown API's `search` (values containing what was
// typed, any case), as a native <datalist> the browser shows under the field (keyboard-usable).
// A prop filter (`key:value`) suggests the props' keys, then the chosen key's values.
import { useEffect, useState } from "preact/hooks";

import { label } from "./Breakdown";
import { reports, type ReportQuery } from "./api";
import { NAMED_CODES } from "./places";

/** The breakdown table holding each filter's values (props need an event: none). */
export { FILTER_TABLES } from "./dimensions.gen";

const SHOWN = 20;
const WHOLE = ["prop", ...NAMED_CODES];
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
      // A props table's rows are key and value, and a country or a language is found by its name,
      // which the API does not hold: those are read whole (100 rows) and the browser matches what
      // was typed.
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

/** How many events' props a prop filter reads (the site's top custom events of the period). */
const PROP_EVENTS = 10;

/**
 * What a prop filter's field (`key:value`) suggests: the keys of the props the site's events carry
 * (as `key:`) until a `:` is typed, then that key's values (as `key:value`); the props of the
 * period's top custom events, read once per period from the props table of each.
 */
export function PropSuggestions({ id, siteId, text, query }: { id: string; siteId: number; text: string; query: ReportQuery }) {
  const [props, setProps] = useState<Map<string, Set<string>>>(new Map());
  const period = JSON.stringify([query.range, query.from, query.to]);
  useEffect(() => {
    let live = true;
    const asked: ReportQuery = { ...query, filters: {}, compare: false };
    reports
      .breakdown(siteId, asked, "events", undefined, { limit: PROP_EVENTS })
      .then((events) =>
        Promise.all(
          events.rows.map((event) =>
            reports.breakdown(siteId, asked, "props", event.value, { limit: 100 }).then(
              (answer) => answer.rows,
              () => [], // an event without readable props adds none
            ),
          ),
        ),
      )
      .then(
        (tables) => {
          if (!live) return;
          const found = new Map<string, Set<string>>();
          for (const row of tables.flat()) {
            if (!row.key) continue;
            const values = found.get(row.key) ?? new Set<string>();
            if (row.value) values.add(row.value);
            found.set(row.key, values);
          }
          setProps(found);
        },
        () => undefined, // suggestions are a help: without them the field still takes any value
      );
    return () => {
      live = false;
    };
  }, [siteId, period]);
  const colon = text.indexOf(":");
  const key = colon >= 0 ? text.slice(0, colon).trim() : null;
  const options =
    key === null
      ? [...props.keys()].sort().map((k) => `${k}:`)
      : [...(props.get(key) ?? [])].sort().map((v) => `${key}:${v}`);
  return (
    <datalist id={id}>
      {options.slice(0, SHOWN).map((value) => (
        <option key={value} value={value} />
      ))}
    </datalist>
  );
}
