// The pages a survey may show on: include rules (none means every page) and exclude rules.
import { Field } from "../components/Field";
import type { MatchKind, Rule, Targeting } from "./api";
import { inputId } from "./errors";
import { BlockError, type ErrorAt } from "./QuestionFields";

const MATCHES: { value: MatchKind; label: string }[] = [
  { value: "exact", label: "Exact path" },
  { value: "prefix", label: "Path starts with" },
  { value: "glob", label: "Glob (* and **)" },
];

function RuleList(props: {
  list: "include" | "exclude";
  rules: Rule[];
  errorAt: ErrorAt;
  onChange: (rules: Rule[]) => void;
}) {
  const { list, rules, errorAt, onChange } = props;
  const at = `targeting.${list}`;
  const noun = list === "include" ? "Show on" : "Never show on";
  const set = (r: number, rule: Rule) => onChange(rules.map((x, i) => (i === r ? rule : x)));
  return (
    <fieldset class="sv-rules" id={inputId(at)} tabIndex={-1}>
      <legend>{list === "include" ? "Show on pages" : "Never show on pages"}</legend>
      <p class="field-hint">
        {list === "exclude"
          ? "Pages matching any of these rules are left out."
          : rules.length
            ? "Pages matching any of these rules show the survey."
            : "No rule: every page of the site."}
      </p>
      <BlockError path={at} errorAt={errorAt} />
      {rules.map((rule, r) => {
        const matchId = inputId(`${at}.${r}.match`);
        const matchError = errorAt(`${at}.${r}.match`);
        return (
          <div class="sv-rule" key={r}>
            <div class={`field${matchError ? " field-invalid" : ""}`}>
              <label for={matchId}>
                {noun} {r + 1}: match
              </label>
              <select
                id={matchId}
                value={rule.match}
                aria-invalid={matchError ? "true" : undefined}
                onChange={(e) => set(r, { ...rule, match: (e.target as HTMLSelectElement).value as MatchKind })}
              >
                {MATCHES.map((m) => (
                  <option key={m.value} value={m.value}>
                    {m.label}
                  </option>
                ))}
              </select>
              {matchError && <p class="field-error">{matchError}</p>}
            </div>
            <Field
              id={inputId(`${at}.${r}.path`)}
              label={`${noun} ${r + 1}: path`}
              value={rule.path}
              maxLength={500}
              placeholder="/pricing"
              error={errorAt(`${at}.${r}.path`)}
              onInput={(e) => set(r, { ...rule, path: (e.target as HTMLInputElement).value })}
            />
            <button
              type="button"
              class="icon-button"
              aria-label={`Remove rule ${r + 1} of ${list === "include" ? "show on" : "never show on"}`}
              onClick={() => onChange(rules.filter((_, i) => i !== r))}
            >
              ×
            </button>
          </div>
        );
      })}
      <button
        type="button"
        class="button"
        disabled={rules.length >= 50}
        onClick={() => onChange([...rules, { match: "prefix", path: "/" }])}
      >
        <span class="icon icon-plus" aria-hidden="true" />
        {list === "include" ? "Add a page rule" : "Add an exclusion"}
      </button>
    </fieldset>
  );
}

export function TargetingFields({ targeting, errorAt, onChange }: { targeting: Targeting; errorAt: ErrorAt; onChange: (t: Targeting) => void }) {
  return (
    <section class="panel sv-targeting" aria-labelledby="sv-targeting-title" id={inputId("targeting")} tabIndex={-1}>
      <h2 id="sv-targeting-title">Pages</h2>
      <BlockError path="targeting" errorAt={errorAt} />
      <RuleList list="include" rules={targeting.include} errorAt={errorAt} onChange={(include) => onChange({ ...targeting, include })} />
      <RuleList list="exclude" rules={targeting.exclude} errorAt={errorAt} onChange={(exclude) => onChange({ ...targeting, exclude })} />
    </section>
  );
}
