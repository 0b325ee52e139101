// The Locations panel's map: countries shaded by visitors, drawn from Natural Earth's 1:110 million
// outlines bundled with the console (worldShapes.ts; no tiles, no request to any other server).
// Loaded lazily as its own chunk, only when this panel shows. The 100 countries with the most
// visitors are shaded (the breakdown API gives at most 100 rows); a click on one filters the
// dashboard by it. Countries too small to draw at this scale (Singapore, Malta, Bahrain...) are
// named under the map; the Countries table beside it lists and filters them like any other.
import { useEffect, useState } from "preact/hooks";

import { messageOf } from "../api";
import { reports, type ReportQuery, type Row } from "./api";
import { countryName } from "./places";
import { world } from "./worldShapes";

const STEPS = 5;
/** How many of the countries too small for the map are named under it. */
const NAMED = 5;
const DRAWN = new Set(world.shapes.map((shape) => shape.code));

/** Countries shaded in five steps of their share of the top country's visitors. */
interface Props {
  siteId: number;
  query: ReportQuery;
  tick: number;
  /** A click on a shaded country filters by it (the Countries table does the same by keyboard). */
  onCountry?: (code: string) => void;
}

export default function WorldMap({ siteId, query, tick, onCountry }: Props) {
  const [answer, setAnswer] = useState<{ asked: string; rows: Row[] } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const asked = JSON.stringify([siteId, query, tick]);
  // The countries of the last answer stay shaded until the new ones come; the map is busy meanwhile.
  const rows = answer?.rows ?? null;
  const busy = answer?.asked !== asked;

  useEffect(() => {
    let alive = true;
    setError(null);
    reports.breakdown(siteId, query, "country", undefined, { limit: 100 }).then(
      (result) => alive && setAnswer({ asked, rows: result.rows }),
      (failure) => alive && setError(messageOf(failure)),
    );
    return () => {
      alive = false;
    };
  }, [asked]);

  if (error) return <p class="notice notice-error" role="alert">The map could not be loaded: {error}</p>;
  const visitors = new Map((rows ?? []).map((row) => [row.value.toUpperCase(), row.visitors ?? 0]));
  const top = Math.max(1, ...visitors.values());
  const known = (rows ?? []).filter((row) => row.value !== "(none)");
  const unseen = known.filter((row) => (row.visitors ?? 0) > 0 && !DRAWN.has(row.value.toUpperCase()));
  return (
    <figure class="world-map" aria-busy={busy ? "true" : undefined}>
      <svg
        viewBox={world.viewBox}
        role="img"
        aria-label={
          rows
            ? `Map of visitors by country: ${known.length} ${known.length === 1 ? "country" : "countries"}`
            : "Map of visitors by country, loading"
        }
      >
        {world.shapes.map(({ code, d }) => {
          const count = visitors.get(code) ?? 0;
          const step = count ? Math.max(1, Math.ceil((count / top) * STEPS)) : 0;
          return (
            <path
              key={code}
              d={d}
              class={`map-step-${step}${count && onCountry ? " map-filter" : ""}`}
              data-country={code}
              onClick={count && onCountry ? () => onCountry(code) : undefined}
            >
              <title>{`${countryName(code)}: ${count.toLocaleString()} visitors`}</title>
            </path>
          );
        })}
      </svg>
      <figcaption class="world-map-credit">
        {unseen.length > 0 && (
          <span class="world-map-unseen">
            Too small for this map: {unseen.slice(0, NAMED).map((row) => countryName(row.value.toUpperCase())).join(", ")}
            {unseen.length > NAMED ? ` and ${unseen.length - NAMED} more` : ""} (in the table).{" "}
          </span>
        )}
        Map: Natural Earth (public domain), via world-atlas.
      </figcaption>
    </figure>
  );
}
