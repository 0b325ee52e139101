// The Locations panel's map: countries shaded by visitors, drawn from a bundled SVG
// (@svg-maps/world, CC BY 4.0, Victor Cazanave; no tiles, no request to any other server).
// Loaded lazily as its own chunk: the paths are large and only this panel needs them. The 100
// countries with the most visitors are shaded (the breakdown API gives at most 100 rows); a click on
// one filters the dashboard by it.
import world from "@svg-maps/world";
import { useEffect, useState } from "preact/hooks";

import { messageOf } from "../api";
import { reports, type ReportQuery, type Row } from "./api";
import { countryName } from "./places";

const STEPS = 5;

/** Countries shaded in five steps of their share of the top country's visitors. */
interface Props {
  siteId: number;
  query: ReportQuery;
  tick: number;
  /** A click on a shaded country filters by it (the Countries table does the same by keyboard). */
  onCountry?: (code: string) => void;
}

export default function WorldMap({ siteId, query, tick, onCountry }: Props) {
  const [rows, setRows] = useState<Row[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const key = JSON.stringify(query);

  useEffect(() => {
    let alive = true;
    setError(null);
    reports.breakdown(siteId, query, "countries", undefined, { limit: 100 }).then(
      (result) => alive && setRows(result.rows),
      (failure) => alive && setError(messageOf(failure)),
    );
    return () => {
      alive = false;
    };
  }, [siteId, key, tick]);

  if (error) return <p class="notice notice-error" role="alert">The map could not be loaded: {error}</p>;
  const visitors = new Map((rows ?? []).map((row) => [row.value.toLowerCase(), row.visitors ?? 0]));
  const top = Math.max(1, ...visitors.values());
  const known = (rows ?? []).filter((row) => row.value !== "(none)").length;
  return (
    <figure class="world-map">
      <svg
        viewBox={world.viewBox}
        role="img"
        aria-label={rows ? `Map of visitors by country: ${known} ${known === 1 ? "country" : "countries"}` : "Map of visitors by country, loading"}
      >
        {world.locations.map((place: { id: string; name: string; path: string }) => {
          const count = visitors.get(place.id) ?? 0;
          const step = count ? Math.max(1, Math.ceil((count / top) * STEPS)) : 0;
          return (
            <path
              key={place.id}
              d={place.path}
              class={`map-step-${step}${count && onCountry ? " map-filter" : ""}`}
              data-country={place.id.toUpperCase()}
              onClick={count && onCountry ? () => onCountry(place.id.toUpperCase()) : undefined}
            >
              <title>{`${countryName(place.id.toUpperCase())}: ${count.toLocaleString()} visitors`}</title>
            </path>
          );
        })}
      </svg>
      <figcaption class="world-map-credit">Map: @svg-maps/world (CC BY 4.0)</figcaption>
    </figure>
  );
}
