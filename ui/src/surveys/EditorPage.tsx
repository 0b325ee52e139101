// The survey builder: name, questions, pages and accent colour beside a live preview of the widget;
// save the draft, publish it, archive the survey; the revisions below.
import { useLocation, useRoute } from "preact-iso/router";
import { useEffect, useState } from "preact/hooks";

import { ApiError, api, messageOf } from "../api";
import { Field } from "../components/Field";
import { Notice } from "../components/Notice";
import { Page } from "../components/Page";
import { useResource } from "../hooks";
import { blankQuestion, cleanDefinition, DEFAULT_ACCENT, type Definition, type Survey, surveysApi } from "./api";
import { type FieldError, inputId, missingTexts, placeError } from "./errors";
import { Preview } from "./Preview";
import { QuestionFields } from "./QuestionFields";
import { Install } from "./Install";
import { Revisions } from "./Revisions";
import { revisionText, StatusBadge } from "./Status";
import { AutoOpenFields } from "./AutoOpenFields";
import { TargetingFields } from "./TargetingFields";
import { useCanChange, VIEWER_NOTE } from "../user";

const BLANK: Definition = {
  name: "",
  questions: [{ ...blankQuestion("rating"), title: "" }],
  targeting: { include: [], exclude: [] },
  accent_color: DEFAULT_ACCENT,
  auto_open: null,
};

function definitionOf(survey: Survey): Definition {
  return {
    name: survey.name,
    questions: survey.questions,
    targeting: survey.targeting,
    accent_color: survey.accent_color,
    auto_open: survey.auto_open ?? null,
  };
}

/** What the builder said on saving a new survey, shown again once it moves to the survey's address. */
let said: { id: number; message: string } | null = null;

export function NewSurveyPage() {
  const { query } = useLocation();
  const siteId = Number.parseInt(query.site ?? "", 10);
  const sites = useResource(api.sites);
  const site = sites.data?.find((s) => s.id === siteId);
  if (sites.data && !site) {
    return (
      <Page title="New survey" back={{ href: "/surveys", label: "All surveys" }}>
        <Notice kind="error">Choose one of your sites first.</Notice>
      </Page>
    );
  }
  return <Editor key="new" siteId={siteId} siteName={site?.name ?? ""} survey={null} />;
}

export function SurveyPage() {
  const { params } = useRoute();
  const id = Number(params.id);
  const survey = useResource(() => surveysApi.get(id));
  if (!survey.data) {
    return (
      <Page title="Survey" back={{ href: "/surveys", label: "All surveys" }}>
        {survey.error ? <Notice kind="error">{survey.error}</Notice> : <p class="loading">Loading the survey…</p>}
      </Page>
    );
  }
  return <Editor key={id} siteId={survey.data.site_id} siteName="" survey={survey.data} />;
}

function Editor({ siteId, siteName, survey: initial }: { siteId: number; siteName: string; survey: Survey | null }) {
  const canChange = useCanChange();
  const { route } = useLocation();
  const [survey, setSurvey] = useState<Survey | null>(initial);
  const [draft, setDraft] = useState<Definition>(initial ? definitionOf(initial) : BLANK);
  const [dirty, setDirty] = useState(false);
  const [busy, setBusy] = useState(false);
  const [fieldError, setFieldError] = useState<FieldError | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(() => (initial && said?.id === initial.id ? said.message : null));
  const [placed, setPlaced] = useState("");
  // Every empty text found before saving, shown at its input all at once.
  const [missing, setMissing] = useState<Record<string, string>>({});

  useEffect(() => {
    if (!fieldError || !placed) return;
    const target = document.getElementById(inputId(placed));
    target?.focus();
    target?.scrollIntoView({ block: "center" });
  }, [fieldError, placed]);

  useEffect(() => {
    if (!dirty) return undefined;
    // Leaving the page (reload, closing the tab) with unsaved changes asks first.
    const warn = (event: BeforeUnloadEvent) => event.preventDefault();
    window.addEventListener("beforeunload", warn);
    return () => window.removeEventListener("beforeunload", warn);
  }, [dirty]);

  const change = (next: Definition) => {
    setDraft(next);
    setDirty(true);
    setDone(null);
  };
  const errorAt = (path: string) => missing[path] ?? (fieldError && placed === path ? fieldError.message : null);

  const run = async (action: () => Promise<Survey>, message: string) => {
    setError(null);
    setFieldError(null);
    setDone(null);
    const found = missingTexts(draft);
    setMissing(found);
    const first = Object.keys(found)[0];
    if (first) {
      const count = Object.keys(found).length;
      setError(count === 1 ? "One field needs your attention." : `${count} fields need your attention.`);
      setFieldError({ field: first, message: found[first] });
      setPlaced(first);
      return;
    }
    setBusy(true);
    try {
      const saved = await action();
      setSurvey(saved);
      setDraft(definitionOf(saved));
      setDirty(false);
      setDone(message);
      if (!survey) {
        // The survey has its own address now (docs/surveys.md): a reload or a shared link opens it.
        said = { id: saved.id, message };
        route(`/surveys/${saved.id}`, true);
      }
    } catch (failure) {
      if (failure instanceof ApiError && failure.field) {
        const at = placeError(failure.field, draft);
        setFieldError({ field: failure.field, message: failure.message });
        setPlaced(at);
        if (!at) setError(`${failure.message} (${failure.field})`);
      } else {
        setError(messageOf(failure));
      }
    } finally {
      setBusy(false);
    }
  };
  const save = async (): Promise<Survey> => {
    const body = cleanDefinition(draft);
    if (!survey) return surveysApi.create(siteId, body);
    return dirty ? surveysApi.update(survey.id, body) : survey;
  };
  const publish = () =>
    run(async () => surveysApi.publish((await save()).id), "Published: visitors on the targeted pages can now see this revision.");
  const archive = () => {
    if (survey) void run(() => surveysApi.archive(survey.id), "Archived: visitors no longer see this survey.");
  };

  const questions = draft.questions;
  const setQuestion = (index: number, q: (typeof questions)[number]) =>
    change({ ...draft, questions: questions.map((x, i) => (i === index ? q : x)) });
  const move = (index: number, delta: number) => {
    const next = questions.slice();
    const [item] = next.splice(index, 1);
    next.splice(index + delta, 0, item);
    change({ ...draft, questions: next });
    window.requestAnimationFrame(() =>
      document.querySelector<HTMLButtonElement>(`#${inputId(`questions.${index + delta}`)} button[aria-label^="Move question ${index + delta + 1} ${delta < 0 ? "up" : "down"}"]`)?.focus(),
    );
  };

  const title = survey ? survey.name || "Survey" : "New survey";
  let publishLabel = "Publish";
  if (survey?.revision) {
    if (survey.draft_revision !== null || dirty) publishLabel = `Publish revision ${survey.draft_revision ?? survey.revision + 1}`;
    else publishLabel = survey.status === "archived" ? "Publish again" : "Published";
  }
  const pending = !survey || survey.draft_revision !== null || dirty;
  return (
    <Page
      title={title}
      back={{ href: `/surveys?site=${siteId}`, label: "All surveys" }}
      subtitle={
        survey ? (
          <>
            <StatusBadge status={survey.status} />
            <span class="sv-revision-text">{revisionText(survey)}</span>
            {survey.revision !== null && <a href={`/surveys/${survey.id}/responses`}>Responses and export</a>}
          </>
        ) : (
          siteName && <span>For {siteName}</span>
        )
      }
    >
      {!canChange && <Notice kind="info">{VIEWER_NOTE}</Notice>}
      {error && <Notice kind="error">{error}</Notice>}
      {done && <Notice kind="success">{done}</Notice>}
      <form
        class="sv-builder"
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          void run(save, "Draft saved. Visitors see it once you publish it.");
        }}
      >
        {/* Read-only for a viewer: every field of the survey disabled at once. */}
        <fieldset class="sv-form" disabled={!canChange}>
          <section class="panel" aria-labelledby="sv-basics-title">
            <h2 id="sv-basics-title">Survey</h2>
            <Field
              id={inputId("name")}
              label="Name"
              hint="Shown to visitors as the survey's title."
              value={draft.name}
              maxLength={100}
              error={errorAt("name")}
              onInput={(e) => change({ ...draft, name: (e.target as HTMLInputElement).value })}
            />
            <div class={`field sv-accent${errorAt("accent_color") ? " field-invalid" : ""}`}>
              <label for={inputId("accent_color")}>Accent colour</label>
              <div class="sv-accent-row">
                <input
                  id={inputId("accent_color")}
                  type="color"
                  value={/^#[0-9a-f]{6}$/i.test(draft.accent_color) ? draft.accent_color : DEFAULT_ACCENT}
                  aria-describedby={errorAt("accent_color") ? `${inputId("accent_color")}-error` : undefined}
                  onInput={(e) => change({ ...draft, accent_color: (e.target as HTMLInputElement).value })}
                />
                <code>{draft.accent_color}</code>
              </div>
              {errorAt("accent_color") && (
                <p class="field-error" id={`${inputId("accent_color")}-error`}>
                  {errorAt("accent_color")}
                </p>
              )}
            </div>
          </section>
          <section class="panel" aria-labelledby="sv-questions-title" id={inputId("questions")} tabIndex={-1}>
            <h2 id="sv-questions-title">Questions</h2>
            {errorAt("questions") && <p class="field-error" role="alert">{errorAt("questions")}</p>}
            <ol class="sv-questions">
              {questions.map((question, index) => (
                <QuestionFields
                  key={question.id ?? `new-${index}`}
                  question={question}
                  index={index}
                  count={questions.length}
                  errorAt={errorAt}
                  onChange={(q) => setQuestion(index, q)}
                  onMove={(delta) => move(index, delta)}
                  onRemove={() => change({ ...draft, questions: questions.filter((_, i) => i !== index) })}
                />
              ))}
            </ol>
            <button
              type="button"
              class="button"
              disabled={questions.length >= 20}
              onClick={() => change({ ...draft, questions: [...questions, blankQuestion("rating")] })}
            >
              Add question
            </button>
          </section>
          <TargetingFields targeting={draft.targeting} errorAt={errorAt} onChange={(targeting) => change({ ...draft, targeting })} />
          <AutoOpenFields autoOpen={draft.auto_open} errorAt={errorAt} onChange={(auto_open) => change({ ...draft, auto_open })} />
          {canChange && (
          <div class="panel sv-actions">
            <button type="submit" class="button" disabled={busy || (!!survey && !dirty)}>
              Save draft
            </button>
            <button type="button" class="button button-primary" disabled={busy || (!pending && survey?.status === "published")} onClick={() => void publish()}>
              {publishLabel}
            </button>
            {survey && survey.status !== "archived" && (
              <button type="button" class="button button-quiet" disabled={busy} onClick={archive}>
                Archive
              </button>
            )}
            {dirty && <span class="field-hint">Unsaved changes</span>}
          </div>
          )}
        </fieldset>
        <div class="sv-side">
          <Preview definition={draft} />
          {survey && <Install surveyId={survey.id} published={survey.revision !== null} autoOpen={draft.auto_open !== null} />}
        </div>
      </form>
      {survey && <Revisions survey={survey} />}
    </Page>
  );
}
