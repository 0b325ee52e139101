// A filter as the owner reads it: "Country is Germany", "Source is Direct / none", "Goal is Signup",
// on the reports page's chips and wherever a page says which filters it applies.
import { type FilterName } from "./api";
import { label } from "./Breakdown";
import { FILTER_LABELS } from "./dimensions.gen";

/** A filter's value as its chip reads: the operator in words, the value as its table shows it. */
export function chipText(name: FilterName, raw: string, goalNames: Map<string, string>): { op: string; value: string } {
  const op = raw.startsWith("!") ? "is not" : raw.startsWith("~") ? "contains" : "is";
  const value = op === "is" ? raw : raw.slice(1);
  if (name === "goal") return { op, value: goalNames.get(value) ?? `#${value}` };
  // As the tables read: "Country is Germany", "Source is Direct / none", "Event is Outbound link (automatic)".
  return { op, value: label(name, value) };
}

/** Every filter of a query in one line: "Language is German, Page is /pricing". */
export function filtersSentence(filters: [FilterName, string][], goalNames: Map<string, string>): string {
  return filters
    .map(([name, raw]) => {
      const chip = chipText(name, raw, goalNames);
      return `${FILTER_LABELS[name]} ${chip.op} ${chip.value}`;
    })
    .join(", ");
}
