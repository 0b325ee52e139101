import { useEffect, useState } from "preact/hooks";

import { chooseTheme, effectiveTheme, onSystemThemeChange, type Theme } from "../theme";

/** Switches between the light and the dark theme; the choice is remembered in this browser. */
export function ThemeToggle() {
  const [theme, setTheme] = useState<Theme>(effectiveTheme);
  useEffect(() => onSystemThemeChange(() => setTheme(effectiveTheme())), []);
  const next: Theme = theme === "dark" ? "light" : "dark";
  return (
    <button
      type="button"
      class="icon-button theme-toggle"
      aria-label={`Use the ${next} theme`}
      title={`Use the ${next} theme`}
      onClick={() => {
        chooseTheme(next);
        setTheme(next);
      }}
    >
      <span class={`icon icon-${next === "dark" ? "moon" : "sun"}`} aria-hidden="true" />
    </button>
  );
}
