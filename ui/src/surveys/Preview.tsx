// A read-only picture of the in-page widget for the survey being edited, drawn with the console's
// own markup and styles that mirror the widget's look (the SDK is never loaded in the console).
import type { Definition, Question } from "./api";

/** Black or white, whichever contrasts more with the accent (as the widget chooses). */
export function textOn(hex: string): string {
  const match = /^#([0-9a-f]{6})$/i.exec(hex);
  if (!match) return "#ffffff";
  const value = Number.parseInt(match[1], 16);
  const channel = (shift: number) => {
    const c = ((value >> shift) & 255) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  const luminance = 0.2126 * channel(16) + 0.7152 * channel(8) + 0.0722 * channel(0);
  return (luminance + 0.05) / 0.05 > 1.05 / (luminance + 0.05) ? "#000000" : "#ffffff";
}

function range(question: Question): number[] {
  const [low, high] = question.scale === "0-10" ? [0, 10] : [1, 5];
  return Array.from({ length: high - low + 1 }, (_, i) => low + i);
}

function PreviewQuestion({ question, index, prefix }: { question: Question; index: number; prefix: string }) {
  const name = `${prefix}-q${index}`;
  const title = (
    <legend class="wp-title">
      {question.title || <span class="wp-placeholder">Question {index + 1}</span>}
      {question.required && <span class="wp-required" aria-hidden="true"> *</span>}
    </legend>
  );
  if (question.type === "rating") {
    return (
      <fieldset class="wp-question">
        {title}
        <div class={`wp-rating${question.scale === "0-10" ? " wp-rating-wide" : ""}`}>
          {range(question).map((n) => (
            <label key={n} class="wp-rate">
              <input type="radio" name={name} value={n} />
              <span>{n}</span>
            </label>
          ))}
        </div>
      </fieldset>
    );
  }
  if (question.type === "text") {
    return (
      <fieldset class="wp-question">
        {title}
        <textarea class="wp-text" rows={3} maxLength={question.max_length ?? 2000} aria-label={question.title} />
      </fieldset>
    );
  }
  const kind = question.type === "single_choice" ? "radio" : "checkbox";
  return (
    <fieldset class="wp-question">
      {title}
      {(question.options ?? []).map((option, i) => (
        <label key={i} class="wp-choice">
          <input type={kind} name={name} />
          <span>{option.label || <span class="wp-placeholder">Option {i + 1}</span>}</span>
        </label>
      ))}
    </fieldset>
  );
}

export function Preview({ definition, id = "survey-preview" }: { definition: Definition; id?: string }) {
  const accent = /^#[0-9a-f]{6}$/i.test(definition.accent_color) ? definition.accent_color : "#2563eb";
  return (
    <figure class="survey-preview" aria-labelledby={`${id}-caption`}>
      <figcaption id={`${id}-caption`} class="survey-preview-caption">
        Preview: the widget as visitors see it (not interactive)
      </figcaption>
      <div class="wp-panel" style={{ "--wp-accent": accent, "--wp-on-accent": textOn(accent) }}>
        <fieldset class="wp-form" disabled>
          <div class="wp-head">
            <span class="wp-name">{definition.name || <span class="wp-placeholder">Survey name</span>}</span>
            <span class="wp-close" aria-hidden="true">×</span>
          </div>
          {definition.questions.map((question, index) => (
            <PreviewQuestion key={index} question={question} index={index} prefix={id} />
          ))}
          <div class="wp-actions">
            <button type="button" class="wp-send">
              Send
            </button>
          </div>
        </fieldset>
      </div>
    </figure>
  );
}
