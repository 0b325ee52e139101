// The world map's shapes: Natural Earth's countries at 1:110 million (public domain), as the
// world-atlas package ships them in TopoJSON (ISC), decoded by topojson-client and drawn in the
// Natural Earth projection by d3-geo, once, when the map's chunk loads. Only the WorldMap chunk
// imports this module, so none of it weighs on the console's first load. docs/console.md names the
// data's source and age.
import { geoNaturalEarth1, geoPath } from "d3-geo";
import type {
  Feature,
  MultiPoint as GeoMultiPoint,
  MultiPolygon as GeoMultiPolygon,
  Polygon as GeoPolygon,
} from "geojson";
import { numericToAlpha2 } from "i18n-iso-countries";
import { feature, merge } from "topojson-client";
import type { GeometryCollection, MultiPolygon, Polygon, Topology } from "topojson-specification";
import atlas from "world-atlas/countries-110m.json";

/** The map's width in SVG units (its height follows from the projection). */
export const WIDTH = 1000;

/**
 * Natural Earth's units without a usable ISO 3166-1 numeric code, by their name there: Kosovo (not
 * in ISO 3166; the IP registries and MaxMind use XK), Northern Cyprus and Somaliland, which IP
 * databases place in Cyprus and Somalia, so their shapes join those countries' shapes; and France
 * and Norway, which some Natural Earth releases leave at -99 (world-atlas 2.0.2 has 250 and 578).
 */
const UNCODED: Readonly<Record<string, string>> = {
  France: "FR",
  Norway: "NO",
  Kosovo: "XK",
  "N. Cyprus": "CY",
  Somaliland: "SO",
};

/**
 * Territories that Natural Earth draws inside another country's shape but that ISO 3166 and IP
 * databases code on their own, found by a box (west, south, east, north, in degrees) around them:
 * French Guiana is part of France's shape at this scale, and its visitors are GF, not FR.
 */
const SEPARATE: ReadonlyArray<{ from: string; code: string; box: [number, number, number, number] }> = [
  { from: "FR", code: "GF", box: [-55, 1, -51, 6] },
];

/** Antarctica is left out: a sixth of the map's height, and no visitors to shade. */
const LEFT_OUT = new Set(["AQ"]);

/** One country's outline: its ISO 3166-1 alpha-2 code and its SVG path. */
export interface Shape {
  code: string;
  d: string;
}

export interface World {
  viewBox: string;
  shapes: Shape[];
}

type Part = Polygon<{ name?: string }> | MultiPolygon<{ name?: string }>;
type Atlas = Topology<{ countries: GeometryCollection<{ name?: string }> }>;

/** The ISO 3166-1 alpha-2 code of one of Natural Earth's units, or null when it has none. */
export function alpha2(name: string | undefined, id: string | number | undefined): string | null {
  const named = name === undefined ? undefined : UNCODED[name];
  if (named) return named;
  if (id === undefined || Number(id) < 0) return null;
  return numericToAlpha2(String(id)) ?? null;
}

/** One country's outline; a country in several of Natural Earth's units (Cyprus, Somalia) is one
 * shape without the borders between them. */
function outline(topology: Atlas, group: Part[]): GeoPolygon | GeoMultiPolygon {
  const [only] = group;
  if (group.length > 1) return merge(topology, group);
  return only.type === "Polygon" ? feature(topology, only).geometry : feature(topology, only).geometry;
}

/**
 * Four points whose projection spans the map: 180° west and east on the equator, where the Natural
 * Earth projection is widest, and the latitudes of the northernmost and southernmost outline (its
 * parallels are straight, so a latitude sets a height).
 */
function extent(features: Feature<GeoPolygon | GeoMultiPolygon>[]): GeoMultiPoint {
  let north = -90;
  let south = 90;
  for (const { geometry } of features) {
    const polygons = geometry.type === "Polygon" ? [geometry.coordinates] : geometry.coordinates;
    for (const [ring] of polygons) {
      for (const [, latitude] of ring) {
        north = Math.max(north, latitude);
        south = Math.min(south, latitude);
      }
    }
  }
  return { type: "MultiPoint", coordinates: [[-180, 0], [180, 0], [0, north], [0, south]] };
}

/** The countries of the map, one shape per code, projected to fit WIDTH. */
function decode(): World {
  const topology = atlas as unknown as Atlas;
  const parts = new Map<string, Part[]>();
  for (const geometry of topology.objects.countries.geometries) {
    if (geometry.type !== "Polygon" && geometry.type !== "MultiPolygon") continue;
    const code = alpha2(geometry.properties?.name, geometry.id);
    if (code === null || LEFT_OUT.has(code)) continue;
    parts.set(code, [...(parts.get(code) ?? []), geometry]);
  }
  const features: Feature<GeoPolygon | GeoMultiPolygon, { code: string }>[] = [];
  for (const [code, group] of parts) {
    features.push({ type: "Feature", properties: { code }, geometry: outline(topology, group) });
  }
  for (const { from, code, box } of SEPARATE) {
    const whole = features.find((item) => item.properties.code === from);
    if (whole?.geometry.type !== "MultiPolygon" || parts.has(code)) continue;
    const [west, south, east, north] = box;
    const inside = ([[[x, y]]]: number[][][]) => x >= west && x <= east && y >= south && y <= north;
    const polygons = whole.geometry.coordinates;
    if (!polygons.some(inside) || polygons.every(inside)) continue;
    whole.geometry = { type: "MultiPolygon", coordinates: polygons.filter((polygon) => !inside(polygon)) };
    const geometry: GeoMultiPolygon = { type: "MultiPolygon", coordinates: polygons.filter(inside) };
    features.push({ type: "Feature", properties: { code }, geometry });
  }
  // Outlines this coarse need no adaptive resampling (precision 0: each vertex projected once), and
  // the frame is fitted, not the 10,000 vertices: a third of the work on a phone.
  const projection = geoNaturalEarth1().precision(0);
  const frame = extent(features);
  const path = geoPath(projection.fitWidth(WIDTH, frame)).digits(1);
  const [[, top], [, bottom]] = path.bounds(frame);
  return {
    viewBox: `0 ${Math.floor(top)} ${WIDTH} ${Math.ceil(bottom) - Math.floor(top)}`,
    shapes: features.map((item) => ({ code: item.properties.code, d: path(item) ?? "" })),
  };
}

export const world: World = decode();
