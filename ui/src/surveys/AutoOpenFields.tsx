// Whether a published survey opens by itself on its targeted pages, and after how many seconds.
import { Switch } from "../components/Switch";
import type { AutoOpen } from "./api";
import { inputId } from "./errors";
import type { ErrorAt } from "./QuestionFields";

const DEFAULT_DELAY = 5;

export function AutoOpenFields({ autoOpen, errorAt, onChange }: { autoOpen: AutoOpen | null; errorAt: ErrorAt; onChange: (a: AutoOpen | null) => void }) {
  const delayId = inputId("auto_open.delay_seconds");
  const delayError = errorAt("auto_open.delay_seconds");
  return (
    <section class="panel sv-auto-open" aria-labelledby="sv-auto-open-title" id={inputId("auto_open")} tabIndex={-1}>
      <h2 id="sv-auto-open-title">Opening</h2>
      <Switch
        id="sv-auto-open"
        label="Open by itself on the targeted pages"
        description="Once published, the survey opens for visitors on the pages above without any code on your site. Off: it opens only where your site calls analytics.feedback(…) (see Install)."
        checked={autoOpen !== null}
        onChange={(on) => onChange(on ? { delay_seconds: DEFAULT_DELAY } : null)}
      />
      {autoOpen !== null && (
        <div class={`field${delayError ? " field-invalid" : ""}`}>
          <label for={delayId}>Seconds after the page loads</label>
          <input
            id={delayId}
            type="number"
            inputMode="numeric"
            min={0}
            max={600}
            step={1}
            value={autoOpen.delay_seconds}
            aria-invalid={delayError ? true : undefined}
            aria-describedby={`${delayId}-hint${delayError ? ` ${delayId}-error` : ""}`}
            onInput={(e) => {
              const value = (e.target as HTMLInputElement).valueAsNumber;
              onChange({ delay_seconds: Number.isFinite(value) ? value : 0 });
            }}
          />
          <p class="field-hint" id={`${delayId}-hint`}>
            0 to 600. A visitor who answered or closed it is not asked again.
          </p>
          {delayError && (
            <p class="field-error" id={`${delayId}-error`}>
              {delayError}
            </p>
          )}
        </div>
      )}
    </section>
  );
}
