// Light and dark themes: the system preference unless the owner picked one, remembered per browser.

export type Theme = "light" | "dark";
const KEY = "sightline.theme";
const query = () => window.matchMedia("(prefers-color-scheme: dark)");

export function storedTheme(): Theme | null {
  try {
    const value = window.localStorage.getItem(KEY);
    return value === "light" || value === "dark" ? value : null;
  } catch {
    return null;
  }
}

export function effectiveTheme(): Theme {
  return storedTheme() ?? (query().matches ? "dark" : "light");
}

/** Applies a theme to the document; `null` follows the system again. */
export function applyTheme(theme: Theme | null): void {
  const root = document.documentElement;
  if (theme) root.dataset.theme = theme;
  else delete root.dataset.theme;
}

export function chooseTheme(theme: Theme): void {
  try {
    window.localStorage.setItem(KEY, theme);
  } catch {
    // Storage refused (private mode, quota): the choice holds for this page only.
  }
  applyTheme(theme);
}

export function onSystemThemeChange(listener: () => void): () => void {
  const media = query();
  media.addEventListener("change", listener);
  return () => media.removeEventListener("change", listener);
}
