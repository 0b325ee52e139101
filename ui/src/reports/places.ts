// Names of the codes the reports hold: countries (ISO 3166-1 alpha-2) and languages (a primary
// subtag such as `de`), as the browser names them (Intl.DisplayNames).

/** The dimensions whose values are codes shown by name: table search and filter suggestions read
 * their rows whole and match the name shown (or the code) in the browser. */
export const NAMED_CODES: readonly string[] = ["country", "language"];

const made: Partial<Record<"region" | "language", Intl.DisplayNames | null>> = {};

function named(type: "region" | "language", locales: string[] | undefined, code: string): string {
  if (made[type] === undefined) {
    try {
      made[type] = new Intl.DisplayNames(locales, { type, fallback: "code" });
    } catch {
      made[type] = null;
    }
  }
  try {
    return made[type]?.of(code) || code;
  } catch {
    return code; // not a well-formed code: shown as it is
  }
}

export function countryName(code: string): string {
  return named("region", ["en"], code);
}

/** A language's name in the browser's own locale (`de` is "German" to an English browser). */
export function languageName(code: string): string {
  return named("language", undefined, code);
}
