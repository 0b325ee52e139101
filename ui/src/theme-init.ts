// Loaded synchronously in <head> so a remembered theme applies before the first paint.
import { applyTheme, storedTheme } from "./theme";

applyTheme(storedTheme());
