// Generated from the registry of dimensions (src/sightline/dimensions.py) by
// scripts/docs_tables.py: change the registry and run it; a test fails when this file drifts.

/** Every filter, by its one name. */
export const FILTER_NAMES = ["page", "entry_page", "exit_page", "source", "channel", "utm_source", "utm_medium", "utm_campaign", "browser", "os", "device", "country", "region", "city", "language", "event", "goal", "prop"] as const;
export type FilterName = (typeof FILTER_NAMES)[number];

/** Each filter's name as the console shows it. */
export const FILTER_LABELS: Record<FilterName, string> = {
  page: "Page",
  entry_page: "Entry page",
  exit_page: "Exit page",
  source: "Source",
  channel: "Channel",
  utm_source: "UTM source",
  utm_medium: "UTM medium",
  utm_campaign: "UTM campaign",
  browser: "Browser",
  os: "Operating system",
  device: "Device",
  country: "Country",
  region: "Region",
  city: "City",
  language: "Language",
  event: "Event",
  goal: "Goal",
  prop: "Prop (key:value)",
};

/** The breakdown table holding each filter's values, suggested as the owner types. */
export const FILTER_TABLES: Partial<Record<FilterName, string>> = {
  page: "page",
  entry_page: "entry_page",
  exit_page: "exit_page",
  source: "source",
  utm_source: "utm_source",
  utm_medium: "utm_medium",
  utm_campaign: "utm_campaign",
  browser: "browser",
  os: "os",
  device: "device",
  country: "country",
  region: "region",
  city: "city",
  language: "language",
  event: "event",
};

/** A tab of a panel of breakdowns: its dimension, title and the filter a row sets. */
export interface DimensionTab {
  dimension: string;
  label: string;
  filter: FilterName;
}

/** The dashboard's panels of breakdowns, each with its tabs in order. */
export const PANELS: Record<string, DimensionTab[]> = {
  pages: [{ dimension: "page", label: "Top pages", filter: "page" }, { dimension: "entry_page", label: "Entry pages", filter: "page" }, { dimension: "exit_page", label: "Exit pages", filter: "page" }],
  sources: [{ dimension: "source", label: "Sources", filter: "source" }, { dimension: "channel", label: "Channels", filter: "channel" }, { dimension: "utm_source", label: "UTM source", filter: "utm_source" }, { dimension: "utm_medium", label: "UTM medium", filter: "utm_medium" }, { dimension: "utm_campaign", label: "UTM campaign", filter: "utm_campaign" }],
  devices: [{ dimension: "browser", label: "Browsers", filter: "browser" }, { dimension: "os", label: "Systems", filter: "os" }, { dimension: "device", label: "Devices", filter: "device" }, { dimension: "language", label: "Languages", filter: "language" }],
  places: [{ dimension: "country", label: "Countries", filter: "country" }, { dimension: "region", label: "Regions", filter: "region" }, { dimension: "city", label: "Cities", filter: "city" }],
  events: [{ dimension: "event", label: "Event", filter: "event" }],
};

/** The dimensions a funnel can be split by. */
export const FUNNEL_SPLITS: { value: string; label: string }[] = [
  { value: "source", label: "Source" },
  { value: "utm_source", label: "UTM source" },
  { value: "utm_medium", label: "UTM medium" },
  { value: "utm_campaign", label: "UTM campaign" },
  { value: "browser", label: "Browser" },
  { value: "os", label: "Operating system" },
  { value: "device", label: "Device" },
  { value: "country", label: "Country" },
  { value: "region", label: "Region" },
  { value: "city", label: "City" },
  { value: "language", label: "Language" },
];
