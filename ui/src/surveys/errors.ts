// Where an API field error (422 with `field`, such as questions.2.options.0.label) is shown: at the
// input of that path, or at the nearest enclosing block that the form draws (a question, a list).
import type { Definition } from "./api";

export interface FieldError {
  field: string;
  message: string;
}

/** The id of the input or block of a field path: `questions.2.title` → `sv-questions-2-title`. */
export function inputId(path: string): string {
  return `sv-${path.replace(/\./g, "-")}`;
}

/** Every path the form draws an input or a block for. */
export function formPaths(definition: Definition): Set<string> {
  const paths = new Set(["name", "accent_color", "questions", "targeting", "targeting.include", "targeting.exclude"]);
  definition.questions.forEach((question, q) => {
    const at = `questions.${q}`;
    for (const field of ["", ".type", ".title", ".scale"]) paths.add(at + field);
    if (question.options) {
      paths.add(`${at}.options`);
      question.options.forEach((_, o) => paths.add(`${at}.options.${o}.label`));
    }
  });
  for (const list of ["include", "exclude"] as const) {
    definition.targeting[list].forEach((_, r) => {
      paths.add(`targeting.${list}.${r}.match`);
      paths.add(`targeting.${list}.${r}.path`);
    });
  }
  return paths;
}

/** The drawn path that shows an error for `field`: itself, else its nearest drawn ancestor. */
export function placeError(field: string, definition: Definition): string {
  const paths = formPaths(definition);
  const parts = field.split(".");
  for (let n = parts.length; n > 0; n -= 1) {
    const candidate = parts.slice(0, n).join(".");
    if (paths.has(candidate)) {
      // An option's id is not editable: show its error at the option's label.
      if (/^questions\.\d+\.options\.\d+$/.test(candidate) && paths.has(`${candidate}.label`)) return `${candidate}.label`;
      return candidate;
    }
    const option = /^(questions\.\d+\.options\.\d+)\.id$/.exec(candidate);
    if (option && paths.has(`${option[1]}.label`)) return `${option[1]}.label`;
  }
  return "";
}

/**
 * Every empty text of a definition at once, in plain words, keyed by the path its input shows
 * errors at (the API reports one field at a time, and in its own terms).
 */
export function missingTexts(definition: {
  name: string;
  questions: { title: string; type: string; options?: { label: string }[] }[];
  targeting: { include: { path: string }[]; exclude: { path: string }[] };
}): Record<string, string> {
  const found: Record<string, string> = {};
  if (!definition.name.trim()) found.name = "Give the survey a name.";
  definition.questions.forEach((question, q) => {
    if (!question.title.trim()) found[`questions.${q}.title`] = `Write the text of question ${q + 1}.`;
    (question.options ?? []).forEach((option, o) => {
      if (!option.label.trim()) {
        found[`questions.${q}.options.${o}.label`] = `Give option ${o + 1} of question ${q + 1} a label.`;
      }
    });
  });
  for (const list of ["include", "exclude"] as const) {
    definition.targeting[list].forEach((rule, r) => {
      if (!rule.path.trim()) found[`targeting.${list}.${r}.path`] = "Enter a path, for example /pricing.";
    });
  }
  return found;
}
