// Formatting of times, sizes and numbers in the owner's locale.

const relative = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
const absolute = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
const number = new Intl.NumberFormat();

const STEPS: [Intl.RelativeTimeFormatUnit, number][] = [
  ["second", 60],
  ["minute", 60],
  ["hour", 24],
  ["day", 30],
  ["month", 12],
  ["year", Number.POSITIVE_INFINITY],
];

/** "3 minutes ago", "yesterday", "now". */
export function timeAgo(iso: string, now: number = Date.now()): string {
  let value = (new Date(iso).getTime() - now) / 1000;
  if (Math.abs(value) < 10) return "just now";
  for (const [unit, size] of STEPS) {
    if (Math.abs(value) < size) return relative.format(Math.round(value), unit);
    value /= size;
  }
  return absolute.format(new Date(iso));
}

/** "21 Nov 2026, 03:10" in the owner's locale and time zone. */
export function dateTime(iso: string): string {
  return absolute.format(new Date(iso));
}

const dayFormat = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", year: "numeric", timeZone: "UTC" });

/** A calendar day ("2026-11-22") as "Nov 22, 2026" in the owner's locale, as the charts name days. */
export function day(isoDate: string): string {
  return dayFormat.format(new Date(`${isoDate.slice(0, 10)}T00:00:00Z`));
}

export function count(value: number): string {
  return number.format(value);
}

/** "1 visitor", "12 visitors": a count and its noun, singular for one. */
export function counted(value: number, one: string, many: string = `${one}s`): string {
  return `${number.format(value)} ${value === 1 ? one : many}`;
}

const UNITS = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB"];

/** "12.4 GiB". */
export function bytes(value: number): string {
  let size = value;
  let unit = 0;
  while (size >= 1024 && unit < UNITS.length - 1) {
    size /= 1024;
    unit += 1;
  }
  const digits = unit === 0 || size >= 100 ? 0 : 1;
  return `${new Intl.NumberFormat(undefined, { maximumFractionDigits: digits }).format(size)} ${UNITS[unit]}`;
}

/** "0.42 ms", "12 ms", "1.3 s". */
export function milliseconds(value: number): string {
  if (value >= 1000) return `${(value / 1000).toFixed(1)} s`;
  const digits = value < 1 ? 2 : value < 10 ? 1 : 0;
  return `${new Intl.NumberFormat(undefined, { maximumFractionDigits: digits }).format(value)} ms`;
}

/** "in 1 minute 5 seconds" style wait of a Retry-After. */
export function wait(seconds: number): string {
  if (seconds < 60) return seconds === 1 ? "1 second" : `${seconds} seconds`;
  const minutes = Math.ceil(seconds / 60);
  return minutes === 1 ? "1 minute" : `${minutes} minutes`;
}

/** "round_trip_ms" -> "Round trip". */
export function label(key: string): string {
  const words = key.replace(/_(ms|bytes|count)$/, "").replace(/_/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** "a" or "an" before a number as it is read aloud: "an 800 px wide window", "an 11 px gap", "a 1280 px wide window". */
export function article(value: number): string {
  const digits = String(Math.trunc(Math.abs(value)));
  // Eight, eighty, eight hundred, eight thousand; eleven and eighteen, alone or in thousands.
  const vowel = digits.startsWith("8") || ((digits.length === 2 || digits.length === 5) && /^1[18]/.test(digits));
  return vowel ? "an" : "a";
}
