import { useEffect, useState } from "preact/hooks";

import { ApiError, messageOf } from "../api";
import { Field } from "../components/Field";
import { formMessage } from "../formMessages";
import { Notice } from "../components/Notice";
import { describeGoal, goals as goalsApi, type Goal, type GoalInput, type MatchKind } from "../goals/api";
import { parseQuery } from "../reports/api";
import { ValueSuggestions } from "../reports/ValueSuggestions";
import type { SettingsProps } from "./registry";

/** The period whose pages, events and props the goal fields suggest. */
const SUGGESTED = parseQuery("range=30d");

interface Draft {
  name: string;
  kind: "page" | "event";
  match: MatchKind;
  path: string;
  event: string;
  propKey: string;
  propValue: string;
  revenueProp: string;
  currency: string;
}

const EMPTY: Draft = { name: "", kind: "page", match: "exact", path: "/", event: "", propKey: "", propValue: "", revenueProp: "", currency: "EUR" };

function draftOf(goal: Goal): Draft {
  return {
    name: goal.name,
    kind: goal.kind,
    match: goal.match ?? "exact",
    path: goal.path ?? "/",
    event: goal.event ?? "",
    propKey: goal.prop?.key ?? "",
    propValue: goal.prop?.value ?? "",
    revenueProp: goal.revenue?.prop ?? "",
    currency: goal.revenue?.currency ?? "EUR",
  };
}

function inputOf(d: Draft): GoalInput & Record<string, unknown> {
  if (d.kind === "page") return { name: d.name.trim(), kind: "page", match: d.match, path: d.path.trim() };
  return {
    name: d.name.trim(),
    kind: "event",
    event: d.event.trim(),
    prop: d.propKey.trim() ? { key: d.propKey.trim(), value: d.propValue } : null,
    revenue: d.revenueProp.trim() ? { prop: d.revenueProp.trim(), currency: d.currency.trim() } : null,
  } as GoalInput & Record<string, unknown>;
}

/** The site's goals: what the dashboard's Goals panel counts as conversions. */
export function GoalsPanel({ site }: SettingsProps) {
  const [list, setList] = useState<Goal[] | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [editing, setEditing] = useState<Goal | "new" | null>(null);
  const [done, setDone] = useState<string | null>(null);

  const load = () =>
    goalsApi.list(site.id).then(
      (found) => {
        setList(found);
        setLoadError(null);
      },
      (failure) => setLoadError(`${messageOf(failure)} Reload the page to try again.`),
    );
  useEffect(() => {
    void load();
  }, [site.id]);

  const remove = async (goal: Goal) => {
    if (!window.confirm(`Delete the goal "${goal.name}"? Its conversions stay in the data; the panel stops showing them.`)) return;
    try {
      await goalsApi.remove(goal.id);
      setDone(`The goal "${goal.name}" is deleted.`);
      await load();
    } catch (failure) {
      setLoadError(messageOf(failure));
    }
  };

  return (
    <section class="panel" aria-labelledby="goals-title">
      <div class="panel-head">
        <h2 id="goals-title">Goals</h2>
        {editing === null && (
          <button type="button" class="button" onClick={() => { setDone(null); setEditing("new"); }}>
            Add a goal
          </button>
        )}
      </div>
      <p class="field-hint">
        A goal is a page visited or a custom event sent. The dashboard's Goals panel shows the visitors who converted, the
        conversion rate and, for event goals with an amount, the revenue.
      </p>
      {loadError && <Notice kind="error">{loadError}</Notice>}
      {done && <Notice kind="success">{done}</Notice>}
      {list && list.length === 0 && editing === null && <p class="report-empty">No goals yet.</p>}
      {list && list.length > 0 && (
        <table class="report-table goals-table">
          <caption class="visually-hidden">Goals of {site.name}</caption>
          <thead>
            <tr>
              <th scope="col">Goal</th>
              <th scope="col">Counts</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.map((goal) => (
              <tr key={goal.id}>
                <th scope="row">{goal.name}</th>
                <td>{describeGoal(goal)}</td>
                <td class="goal-actions">
                  <button type="button" class="link-button" onClick={() => { setDone(null); setEditing(goal); }} aria-label={`Edit the goal ${goal.name}`}>
                    Edit
                  </button>
                  <button type="button" class="link-button" onClick={() => void remove(goal)} aria-label={`Delete the goal ${goal.name}`}>
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {editing !== null && (
        <GoalForm
          key={editing === "new" ? "new" : editing.id}
          siteId={site.id}
          goal={editing === "new" ? null : editing}
          onCancel={() => setEditing(null)}
          onSaved={(goal, created) => {
            setEditing(null);
            setDone(created ? `The goal "${goal.name}" is added.` : `The goal "${goal.name}" is saved.`);
            void load();
          }}
        />
      )}
    </section>
  );
}

function GoalForm(props: { siteId: number; goal: Goal | null; onCancel: () => void; onSaved: (goal: Goal, created: boolean) => void }) {
  const { siteId, goal, onCancel, onSaved } = props;
  const [d, setD] = useState<Draft>(goal ? draftOf(goal) : EMPTY);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ field: string | null; message: string } | null>(null);
  const set = (changes: Partial<Draft>) => setD({ ...d, ...changes });
  const at = (field: string) => (error && error.field !== null && error.field.startsWith(field) ? error.message : null);

  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const input = inputOf(d);
      const saved = goal ? await goalsApi.update(goal.id, input) : await goalsApi.create(siteId, input);
      onSaved(saved, goal === null);
    } catch (failure) {
      setError({ field: failure instanceof ApiError ? failure.field : null, message: formMessage("goal", failure) });
    } finally {
      setBusy(false);
    }
  };
  const known = ["name", "kind", "match", "path", "event", "prop", "revenue"];
  const general = error && (error.field === null || !known.some((f) => error.field?.startsWith(f))) ? error.message : null;

  return (
    <form class="goal-form" onSubmit={submit} noValidate aria-label={goal ? `Edit the goal ${goal.name}` : "New goal"}>
      <Field id="goal-name" label="Goal name" maxLength={100} value={d.name} error={at("name")} onInput={(e) => set({ name: e.currentTarget.value })} />
      <fieldset class="goal-kind">
        <legend>The visitor converts when they</legend>
        <label class="checkbox-row">
          <input type="radio" name="goal-kind" value="page" checked={d.kind === "page"} onChange={() => set({ kind: "page" })} /> visit a page
        </label>
        <label class="checkbox-row">
          <input type="radio" name="goal-kind" value="event" checked={d.kind === "event"} onChange={() => set({ kind: "event" })} /> send a custom event
        </label>
      </fieldset>
      {d.kind === "page" ? (
        <>
          <div class={`field${at("match") ? " field-invalid" : ""}`}>
            <label for="goal-match">Match</label>
            <select id="goal-match" value={d.match} onChange={(e) => set({ match: e.currentTarget.value as MatchKind })}>
              <option value="exact">Exact path</option>
              <option value="prefix">Path starts with</option>
              <option value="glob">Glob (* within a segment, ** across)</option>
            </select>
            {at("match") && <p class="field-error">{at("match")}</p>}
          </div>
          <Field id="goal-path" label="Path" hint="For example /pricing, /blog/ or /docs/*/install." list="goal-path-suggestions" autoComplete="off" value={d.path} error={at("path")} onInput={(e) => set({ path: e.currentTarget.value })} />
          <ValueSuggestions key="goal-path-suggestions" id="goal-path-suggestions" siteId={siteId} table="page" text={d.path} query={SUGGESTED} />
        </>
      ) : (
        <>
          <Field id="goal-event" label="Event name" maxLength={100} list="goal-event-suggestions" autoComplete="off" value={d.event} error={at("event")} onInput={(e) => set({ event: e.currentTarget.value })} />
          <ValueSuggestions key="goal-event-suggestions" id="goal-event-suggestions" siteId={siteId} table="event" text={d.event} query={SUGGESTED} />
          <ValueSuggestions key="goal-prop-keys" id="goal-prop-keys" siteId={siteId} table="prop" name={d.event.trim() || undefined} text="" query={SUGGESTED} />
          <Field id="goal-prop-key" label="Only when the prop (optional)" hint="Leave empty to count every such event." list="goal-prop-keys" autoComplete="off" value={d.propKey} error={at("prop.key") ?? (error?.field === "prop" ? error.message : null)} onInput={(e) => set({ propKey: e.currentTarget.value })} />
          {d.propKey.trim() !== "" && <ValueSuggestions key="goal-prop-values" id="goal-prop-values" siteId={siteId} table="prop" name={d.event.trim() || undefined} propKey={d.propKey.trim()} text="" query={SUGGESTED} />}
          {d.propKey.trim() !== "" && <Field id="goal-prop-value" label="equals" list="goal-prop-values" autoComplete="off" value={d.propValue} error={at("prop.value")} onInput={(e) => set({ propValue: e.currentTarget.value })} />}
          <Field id="goal-revenue-prop" label="Revenue from the numeric prop (optional)" hint="For example amount: each conversion's value." list="goal-prop-keys" autoComplete="off" value={d.revenueProp} error={at("revenue.prop") ?? (error?.field === "revenue" ? error.message : null)} onInput={(e) => set({ revenueProp: e.currentTarget.value })} />
          {d.revenueProp.trim() !== "" && <Field id="goal-currency" label="Currency" hint="Three letters: EUR, USD, GBP…" maxLength={3} value={d.currency} error={at("revenue.currency")} onInput={(e) => set({ currency: e.currentTarget.value.toUpperCase() })} />}
        </>
      )}
      {general && <Notice kind="error">{general}</Notice>}
      <div class="form-actions">
        <button type="submit" class="button" disabled={busy}>
          {goal ? "Save the goal" : "Add the goal"}
        </button>
        <button type="button" class="button button-quiet" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
