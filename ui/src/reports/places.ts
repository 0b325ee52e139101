// Names of the places the reports show: ISO 3166-1 alpha-2 codes as the browser names them.
let names: Intl.DisplayNames | null | undefined;

export function countryName(code: string): string {
  if (names === undefined) {
    try {
      names = new Intl.DisplayNames(["en"], { type: "region" });
    } catch {
      names = null;
    }
  }
  try {
    return (names && names.of(code)) || code;
  } catch {
    return code;
  }
}
