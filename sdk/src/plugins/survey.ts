/**
 * The survey widget (analytics-survey.js), loaded by the core on the first `feedback(surveyId)` call.
 *
 * `open(surveyId)` asks the server for the survey's published revision and whether this page is
 * targeted (`GET {base}/i/feedback/surveys/{id}?key=KEY&path=PATH`), skips it when this visitor
 * already answered or dismissed that revision or another survey is open, and otherwise shows it
 * in an open shadow root: a non-modal `role="dialog"` labelled by the survey's name, focus moved
 * in and given back on close, Esc closes, every control reachable and operable by keyboard with a
 * visible focus ring, full width on small screens. Answers go to `POST {base}/i/feedback/responses`
 * with a response id made once per showing, so retries are stored once.
 */
import type { Core, Host, Plugin } from "../plugin";
import { OWN } from "../capture/common";

interface Option {
  id: string;
  label: string;
}

interface Question {
  id: string;
  type: "rating" | "single_choice" | "multiple_choice" | "text";
  title: string;
  required: boolean;
  scale?: "1-5" | "0-10";
  options?: Option[];
  max_length?: number;
}

interface Survey {
  id: number;
  revision: number;
  name: string;
  accent_color: string;
  questions: Question[];
  targeted?: boolean;
}

type Answer = number | string | string[];

const W = window;
const D = document;
const MEMORY = "sightline_surveys";
const MEMORY_MAX = 200;
const ATTEMPTS = 4;

const CSS = `
:host{all:initial}
.panel{position:fixed;right:16px;bottom:16px;z-index:2147483647;box-sizing:border-box;width:360px;
max-width:calc(100vw - 32px);max-height:calc(100vh - 32px);overflow:auto;padding:20px 16px 16px;
background:#fff;color:#1f2328;border:1px solid #d0d7de;border-radius:12px;
box-shadow:0 8px 30px rgba(0,0,0,.18);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
@media (max-width:480px){.panel{left:0;right:0;bottom:0;width:auto;max-width:none;max-height:85vh;
border-radius:12px 12px 0 0;border-width:1px 0 0}}
h2{font-size:16px;line-height:1.3;margin:0 36px 14px 0}
form{margin:0}
fieldset{border:0;margin:0 0 16px;padding:0;min-width:0}
legend,.label{display:block;font-weight:600;margin:0 0 6px;padding:0}
.req{color:#b42318;margin-left:2px}
.scale{display:flex;flex-wrap:wrap;gap:4px}
.scale label{flex:1 0 26px;position:relative}
.hidden{position:absolute;opacity:0;width:1px;height:1px;margin:0;pointer-events:none}
.pill{display:block;text-align:center;padding:7px 0;border:1px solid #d0d7de;border-radius:6px;cursor:pointer;
background:#f6f8fa}
.pill:hover{border-color:#8c959f}
input:checked+.pill{background:var(--accent);border-color:var(--accent);color:var(--on-accent);font-weight:600}
input:focus-visible+.pill{outline:2px solid #1f2328;outline-offset:2px}
.choice{display:flex;gap:8px;align-items:flex-start;padding:5px 0;cursor:pointer}
.choice input{accent-color:var(--accent);width:16px;height:16px;margin:2px 0 0;flex:none}
textarea{display:block;width:100%;box-sizing:border-box;min-height:76px;padding:8px;font:inherit;color:inherit;
background:#fff;border:1px solid #8c959f;border-radius:6px;resize:vertical}
:focus-visible{outline:2px solid #1f2328;outline-offset:2px}
[aria-invalid=true]{border-color:#b42318}
.error{color:#b42318;font-size:13px;margin:6px 0 0}
.status{font-size:13px;color:#57606a;margin:0 0 10px;min-height:1em}
.status:empty{display:none}
.actions{display:flex;justify-content:flex-end;gap:8px}
button{font:inherit;border-radius:6px;padding:8px 16px;cursor:pointer;border:1px solid transparent}
.send{background:var(--accent);color:var(--on-accent);font-weight:600}
.send:disabled{opacity:.6;cursor:progress}
.secondary{background:#f6f8fa;border-color:#d0d7de;color:#1f2328}
.close{position:absolute;top:10px;right:10px;width:32px;height:32px;padding:0;background:transparent;
color:#57606a;font-size:22px;line-height:1}
.close:hover{background:#f6f8fa}
.thanks{font-size:15px;margin:0 0 16px}
@media (prefers-reduced-motion:no-preference){.panel{animation:in .16s ease-out}}
@keyframes in{from{opacity:0;transform:translateY(8px)}}
`;

type Attrs = Record<string, string | number | boolean | undefined>;

/** An element with attributes and children; text is always set as text, never parsed as HTML. */
const el = (tag: string, attrs: Attrs = {}, ...children: (Node | string)[]): HTMLElement => {
  const node = D.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === false || value === undefined) continue;
    node.setAttribute(name, value === true ? "" : String(value));
  }
  node.append(...children);
  return node;
};

/** Black or white text, whichever reads better on the accent colour. */
const onAccent = (hex: string): string => {
  const channel = (i: number): number => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  const luminance = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
  return luminance > 0.179 ? "#000" : "#fff";
};

const randomId = (): string => {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
};

const readMemory = (): Record<string, string> => {
  try {
    const value = JSON.parse(localStorage.getItem(MEMORY) || "{}");
    return value && typeof value == "object" && !Array.isArray(value) ? value : {};
  } catch {
    return {};
  }
};

const remember = (entry: string, outcome: "answered" | "dismissed"): void => {
  try {
    const memory = readMemory();
    delete memory[entry];
    memory[entry] = outcome;
    const keys = Object.keys(memory);
    for (const old of keys.slice(0, Math.max(0, keys.length - MEMORY_MAX))) delete memory[old];
    localStorage.setItem(MEMORY, JSON.stringify(memory));
  } catch {
    /* storage full or blocked: the survey may be offered again, nothing else breaks */
  }
};

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const factory = (host: Host): Plugin => {
  let busy = false;

  const load = async (surveyId: string): Promise<Survey | undefined> => {
    const url =
      host.base_ +
      "i/feedback/surveys/" +
      encodeURIComponent(surveyId) +
      "?key=" +
      encodeURIComponent(host.key_) +
      "&path=" +
      encodeURIComponent(location.pathname);
    const response = await fetch(url, { credentials: "omit" });
    if (!response.ok) return undefined;
    const survey = (await response.json()) as Survey;
    return survey && Array.isArray(survey.questions) && survey.targeted === true ? survey : undefined;
  };

  const send = async (body: string): Promise<boolean> => {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      try {
        const response = await fetch(host.base_ + "i/feedback/responses", {
          method: "POST",
          body,
          credentials: "omit",
          headers: { "Content-Type": "text/plain;charset=UTF-8" },
          keepalive: true,
        });
        if (response.status == 202) return true;
        if (response.status != 429 && response.status < 500) return false;
        const after = Number(response.headers.get("retry-after"));
        await sleep(after > 0 ? Math.min(after, 30) * 1000 : 2 ** attempt * 500 * (1 + Math.random()));
      } catch {
        await sleep(2 ** attempt * 500 * (1 + Math.random()));
      }
    }
    return false;
  };

  const show = (survey: Survey, entry: string): void => {
    const previous = D.activeElement as HTMLElement | null;
    const holder = el("div", { "data-sightline-survey": survey.id, [OWN]: true });
    const root = holder.attachShadow({ mode: "open" });
    const style = el("style");
    style.textContent = CSS;
    const panel = el("div", { class: "panel", role: "dialog", "aria-labelledby": "title", "aria-modal": "false" });
    panel.style.setProperty("--accent", survey.accent_color);
    panel.style.setProperty("--on-accent", onAccent(survey.accent_color));
    const close = el("button", { type: "button", class: "close", "aria-label": "Close survey" }, "×");
    const status = el("p", { class: "status", role: "status", "aria-live": "polite" });
    const submit = el("button", { type: "submit", class: "send" }, "Send") as HTMLButtonElement;
    const form = el("form", { novalidate: true }) as HTMLFormElement;
    const errors = new Map<string, HTMLElement>();
    const responseId = randomId();
    let answered = false;

    const finish = (): void => {
      if (!holder.isConnected) return;
      holder.remove();
      busy = false;
      if (!answered) remember(entry, "dismissed");
      if (previous?.isConnected && typeof previous.focus == "function") previous.focus();
    };

    const question = (q: Question, index: number): HTMLElement => {
      const name = "q" + index;
      const error = el("p", { class: "error", id: name + "-error", hidden: true });
      errors.set(q.id, error);
      const required = q.required ? [el("span", { class: "req", "aria-hidden": "true" }, "*")] : [];
      if (q.type == "text") {
        const label = el("label", { class: "label", for: name }, q.title, ...required);
        const area = el("textarea", {
          id: name,
          name,
          maxlength: q.max_length || 2000,
          "aria-required": q.required,
          "aria-describedby": name + "-error",
        });
        return el("div", { class: "field", "data-question": q.id }, label, area, error);
      }
      const legend = el("legend", {}, q.title, ...required);
      const set = el("fieldset", { "data-question": q.id, "aria-describedby": name + "-error" }, legend);
      if (q.required) set.setAttribute("aria-required", "true");
      if (q.type == "rating") {
        const [low, high] = q.scale == "0-10" ? [0, 10] : [1, 5];
        const row = el("div", { class: "scale" });
        for (let value = low; value <= high; value++) {
          const input = el("input", { type: "radio", class: "hidden", name, value, "aria-label": String(value) });
          row.append(el("label", {}, input, el("span", { class: "pill", "aria-hidden": "true" }, String(value))));
        }
        set.append(row);
      } else {
        const type = q.type == "single_choice" ? "radio" : "checkbox";
        for (const option of q.options || []) {
          const input = el("input", { type, name, value: option.id });
          set.append(el("label", { class: "choice" }, input, el("span", {}, option.label)));
        }
      }
      set.append(error);
      return set;
    };

    const collect = (): { answers: Record<string, Answer>; missing: string[] } => {
      const answers: Record<string, Answer> = {};
      const missing: string[] = [];
      survey.questions.forEach((q, index) => {
        const name = "q" + index;
        let value: Answer | undefined;
        if (q.type == "text") {
          const text = (form.elements.namedItem(name) as HTMLTextAreaElement).value.trim();
          if (text) value = text;
        } else {
          const checked = Array.from(form.querySelectorAll<HTMLInputElement>(`input[name="${name}"]:checked`));
          if (q.type == "multiple_choice") value = checked.length ? checked.map((c) => c.value) : undefined;
          else if (checked[0]) value = q.type == "rating" ? Number(checked[0].value) : checked[0].value;
        }
        if (value !== undefined) answers[q.id] = value;
        else if (q.required) missing.push(q.id);
      });
      return { answers, missing };
    };

    const thank = (): void => {
      const done = el("button", { type: "button", class: "secondary" }, "Close");
      done.addEventListener("click", finish);
      const thanks = el("p", { class: "thanks" }, "Thank you for your feedback!");
      form.replaceWith(el("div", { class: "done" }, thanks, el("div", { class: "actions" }, done)));
      status.textContent = "";
      done.focus();
    };

    form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (submit.disabled) return;
      const { answers, missing } = collect();
      for (const [id, error] of errors) {
        const problem = missing.includes(id);
        error.hidden = !problem;
        error.textContent = problem ? "This question needs an answer." : "";
        const field = form.querySelector(`[data-question="${id}"]`);
        field?.querySelectorAll("input,textarea").forEach((c) => c.setAttribute("aria-invalid", String(problem)));
      }
      if (missing.length) {
        form.querySelector<HTMLElement>(`[data-question="${missing[0]}"] input,[data-question="${missing[0]}"] textarea`)?.focus();
        return;
      }
      if (!Object.keys(answers).length) {
        status.textContent = "Answer at least one question, or close the survey.";
        return;
      }
      const context = host.context_();
      const body = JSON.stringify({
        key: host.key_,
        survey_id: survey.id,
        revision: survey.revision,
        response_id: responseId,
        visitor_id: context.visitorId,
        page_path: location.pathname.slice(0, 2000),
        answers,
      });
      submit.disabled = true;
      status.textContent = "Sending…";
      send(body).then((ok) => {
        submit.disabled = false;
        if (!ok) {
          status.textContent = "Your answers could not be sent. Please try again.";
          return;
        }
        answered = true;
        remember(entry, "answered");
        thank();
      });
    });

    survey.questions.forEach((q, index) => form.append(question(q, index)));
    form.append(status, el("div", { class: "actions" }, submit));
    close.addEventListener("click", finish);
    panel.addEventListener("keydown", (event) => {
      if ((event as KeyboardEvent).key == "Escape") {
        event.stopPropagation();
        finish();
      }
    });
    panel.append(close, el("h2", { id: "title" }, survey.name), form);
    root.append(style, panel);
    D.body.append(holder);
    const first = panel.querySelector<HTMLElement>("form input, form textarea");
    (first || close).focus();
  };

  return {
    async open_(surveyId: unknown): Promise<boolean> {
      if ((typeof surveyId != "string" && typeof surveyId != "number") || !surveyId || busy || !D.body) return false;
      busy = true;
      try {
        const survey = await load("" + surveyId);
        const visitor = host.context_().visitorId;
        const entry = [host.key_, visitor, survey?.id, survey?.revision].join("|");
        if (!survey || readMemory()[entry] || host.privacy_()) {
          busy = false;
          return false;
        }
        show(survey, entry);
        return true;
      } catch {
        busy = false;
        return false;
      }
    },
  };
};

(W.analytics as unknown as Core)._register("survey", factory);
