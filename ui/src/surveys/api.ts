// The surveys console API (docs/surveys.md): definitions, revisions, the summary and the export.
import { ApiError, request } from "../api";

export type QuestionType = "rating" | "single_choice" | "multiple_choice" | "text";
export type Scale = "1-5" | "0-10";
export type MatchKind = "exact" | "prefix" | "glob";
export type SurveyStatus = "draft" | "published" | "archived";

export interface Option {
  id?: string;
  label: string;
}

export interface Question {
  id?: string;
  type: QuestionType;
  title: string;
  required: boolean;
  options?: Option[];
  scale?: Scale;
  max_length?: number;
}

export interface Rule {
  match: MatchKind;
  path: string;
}

export interface Targeting {
  include: Rule[];
  exclude: Rule[];
}

/** Opening by itself on the targeted pages, this many seconds after a page loads. */
export interface AutoOpen {
  delay_seconds: number;
}

export interface Definition {
  name: string;
  questions: Question[];
  targeting: Targeting;
  accent_color: string;
  auto_open: AutoOpen | null;
}

export interface Survey extends Definition {
  id: number;
  site_id: number;
  status: SurveyStatus;
  revision: number | null;
  draft_revision: number | null;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
  responses: number;
  revisions: { revision: number; published_at: string; responses: number }[];
}

export interface Revision extends Definition {
  survey_id: number;
  revision: number;
  published: boolean;
  published_at: string | null;
}

interface QuestionSummaryBase {
  id: string;
  title: string;
  answered: number;
}

export type QuestionSummary =
  | (QuestionSummaryBase & {
      type: "rating";
      scale: Scale;
      distribution: { value: number; count: number }[];
      average: number | null;
    })
  | (QuestionSummaryBase & {
      type: "single_choice" | "multiple_choice";
      options: { id: string; label: string; count: number }[];
    })
  | (QuestionSummaryBase & {
      type: "text";
      latest: { response_id: number; submitted_at: string; text: string }[];
    });

export interface Summary {
  survey_id: number;
  revision: number;
  responses: number;
  summarized: number;
  first_submitted_at: string | null;
  last_submitted_at: string | null;
  questions: QuestionSummary[];
}

export interface ExportBatch {
  url: string;
  rows: number;
  next: number | null;
}

const base = "/api/feedback/surveys";

export const DEFAULT_ACCENT = "#2563eb";
export const QUESTION_TYPES: { value: QuestionType; label: string }[] = [
  { value: "rating", label: "Rating" },
  { value: "single_choice", label: "Single choice" },
  { value: "multiple_choice", label: "Multiple choice" },
  { value: "text", label: "Text" },
];

export function exportUrl(id: number, revision: number, offset: number): string {
  return `${base}/${id}/export?revision=${revision}&offset=${offset}`;
}

/** The offset of the next batch named by a `Link: <...offset=K>; rel="next"` header, or null. */
export function nextOffset(link: string | null): number | null {
  const target = link?.match(/<([^>]+)>\s*;\s*rel="next"/)?.[1];
  if (!target) return null;
  const offset = new URL(target, window.location.origin).searchParams.get("offset");
  return offset === null ? null : Number.parseInt(offset, 10);
}

/** Counts the data rows of a CSV text (quoted cells may hold line breaks). */
function csvRows(text: string): number {
  let rows = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (c === '"') quoted = !quoted;
    else if (c === "\n" && !quoted) rows += 1;
  }
  return Math.max(0, rows - 1);
}

export const surveysApi = {
  list: (siteId: number) =>
    request<{ surveys: Survey[] }>("GET", `${base}?site_id=${siteId}`).then((r) => r.surveys),
  get: (id: number) => request<Survey>("GET", `${base}/${id}`),
  create: (siteId: number, definition: Definition) =>
    request<Survey>("POST", base, { site_id: siteId, ...definition }),
  update: (id: number, definition: Definition) => request<Survey>("PATCH", `${base}/${id}`, definition),
  publish: (id: number) => request<Survey>("POST", `${base}/${id}/publish`, {}),
  archive: (id: number) => request<Survey>("POST", `${base}/${id}/archive`, {}),
  revision: (id: number, n: number) => request<Revision>("GET", `${base}/${id}/revisions/${n}`),
  summary: (id: number, revision: number | null) =>
    request<Summary>("GET", `${base}/${id}/summary${revision ? `?revision=${revision}` : ""}`),
  /** Fetches one export batch to learn its size and the next batch from the Link header. */
  async batch(id: number, revision: number, offset: number): Promise<ExportBatch> {
    const url = exportUrl(id, revision, offset);
    let response: Response;
    try {
      response = await fetch(url, { credentials: "same-origin", cache: "no-store" });
    } catch {
      throw new ApiError(0, "network_error", "The server could not be reached. Check the connection and try again.");
    }
    if (!response.ok) {
      const payload = (await response.json().catch(() => null)) as { error?: { code?: string; message?: string } } | null;
      throw new ApiError(
        response.status,
        payload?.error?.code ?? "http_error",
        payload?.error?.message ?? `The server answered with HTTP ${response.status}.`,
      );
    }
    return { url, rows: csvRows(await response.text()), next: nextOffset(response.headers.get("Link")) };
  },
};

/** A new question of a type, with the fields that type needs. */
export function blankQuestion(type: QuestionType): Question {
  if (type === "rating") return { type, title: "", required: false, scale: "1-5" };
  if (type === "text") return { type, title: "", required: false, max_length: 2000 };
  return { type, title: "", required: false, options: [{ label: "" }, { label: "" }] };
}

/** A question changed to another type, keeping its id, title and required flag. */
export function retype(question: Question, type: QuestionType): Question {
  const fresh = blankQuestion(type);
  const options = question.options && question.options.length >= 2 ? question.options : fresh.options;
  return {
    ...fresh,
    id: question.id,
    title: question.title,
    required: question.required,
    ...(fresh.options ? { options } : {}),
  };
}

/** The definition as the API takes it: only the fields of each question's type. */
export function cleanDefinition(definition: Definition): Definition {
  return {
    ...definition,
    questions: definition.questions.map((q) => {
      const out: Question = { type: q.type, title: q.title, required: q.required };
      if (q.id) out.id = q.id;
      if (q.type === "rating") out.scale = q.scale ?? "1-5";
      if (q.type === "text") out.max_length = q.max_length ?? 2000;
      if (q.type === "single_choice" || q.type === "multiple_choice")
        out.options = (q.options ?? []).map((o) => (o.id ? { id: o.id, label: o.label } : { label: o.label }));
      return out;
    }),
  };
}
