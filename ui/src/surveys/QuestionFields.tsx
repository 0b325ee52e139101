// One question of the builder: type, title, required, the scale or the options; move and remove.
import { Field } from "../components/Field";
import { QUESTION_TYPES, type Question, type QuestionType, retype } from "./api";
import { inputId } from "./errors";

export type ErrorAt = (path: string) => string | null;

interface QuestionFieldsProps {
  question: Question;
  index: number;
  count: number;
  errorAt: ErrorAt;
  onChange: (question: Question) => void;
  onMove: (delta: number) => void;
  onRemove: () => void;
}

/** A short error line under a block (not an input), tied to the block for assistive technology. */
export function BlockError({ path, errorAt }: { path: string; errorAt: ErrorAt }) {
  const message = errorAt(path);
  if (!message) return null;
  return (
    <p class="field-error" id={`${inputId(path)}-error`} role="alert">
      {message}
    </p>
  );
}

function SelectField(props: {
  path: string;
  label: string;
  value: string;
  options: { value: string; label: string }[];
  errorAt: ErrorAt;
  onChange: (value: string) => void;
}) {
  const id = inputId(props.path);
  const error = props.errorAt(props.path);
  return (
    <div class={`field${error ? " field-invalid" : ""}`}>
      <label for={id}>{props.label}</label>
      <select
        id={id}
        value={props.value}
        aria-invalid={error ? "true" : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
        onChange={(e) => props.onChange((e.target as HTMLSelectElement).value)}
      >
        {props.options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      {error && (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}

function OptionsFields({ question, index, errorAt, onChange }: Omit<QuestionFieldsProps, "count" | "onMove" | "onRemove">) {
  const options = question.options ?? [];
  const at = `questions.${index}.options`;
  const set = (next: typeof options) => onChange({ ...question, options: next });
  return (
    <fieldset class="sv-options" id={inputId(at)} tabIndex={-1} aria-describedby={errorAt(at) ? `${inputId(at)}-error` : undefined}>
      <legend>Options</legend>
      <BlockError path={at} errorAt={errorAt} />
      {options.map((option, o) => (
        <div class="sv-option" key={o}>
          <Field
            id={inputId(`${at}.${o}.label`)}
            label={`Option ${o + 1}`}
            value={option.label}
            maxLength={200}
            error={errorAt(`${at}.${o}.label`)}
            onInput={(e) => set(options.map((x, i) => (i === o ? { ...x, label: (e.target as HTMLInputElement).value } : x)))}
          />
          <button
            type="button"
            class="icon-button"
            aria-label={`Remove option ${o + 1}`}
            disabled={options.length <= 2}
            onClick={() => set(options.filter((_, i) => i !== o))}
          >
            ×
          </button>
        </div>
      ))}
      <button type="button" class="button button-quiet" disabled={options.length >= 20} onClick={() => set([...options, { label: "" }])}>
        Add option
      </button>
    </fieldset>
  );
}

export function QuestionFields({ question, index, count, errorAt, onChange, onMove, onRemove }: QuestionFieldsProps) {
  const at = `questions.${index}`;
  const number = index + 1;
  return (
    <li class="sv-question" id={inputId(at)} tabIndex={-1} aria-labelledby={`${inputId(at)}-label`}>
      <div class="sv-question-head">
        <h3 id={`${inputId(at)}-label`}>Question {number}</h3>
        <div class="sv-question-tools">
          <button type="button" class="icon-button" aria-label={`Move question ${number} up`} disabled={index === 0} onClick={() => onMove(-1)}>
            ↑
          </button>
          <button
            type="button"
            class="icon-button"
            aria-label={`Move question ${number} down`}
            disabled={index === count - 1}
            onClick={() => onMove(1)}
          >
            ↓
          </button>
          <button type="button" class="icon-button" aria-label={`Remove question ${number}`} disabled={count <= 1} onClick={onRemove}>
            ×
          </button>
        </div>
      </div>
      <BlockError path={at} errorAt={errorAt} />
      <div class="sv-question-row">
        <SelectField
          path={`${at}.type`}
          label="Type"
          value={question.type}
          options={QUESTION_TYPES}
          errorAt={errorAt}
          onChange={(value) => onChange(retype(question, value as QuestionType))}
        />
        {question.type === "rating" && (
          <SelectField
            path={`${at}.scale`}
            label="Scale"
            value={question.scale ?? "1-5"}
            options={[
              { value: "1-5", label: "1 to 5" },
              { value: "0-10", label: "0 to 10" },
            ]}
            errorAt={errorAt}
            onChange={(value) => onChange({ ...question, scale: value as "1-5" | "0-10" })}
          />
        )}
      </div>
      <Field
        id={inputId(`${at}.title`)}
        label="Question"
        value={question.title}
        maxLength={300}
        error={errorAt(`${at}.title`)}
        onInput={(e) => onChange({ ...question, title: (e.target as HTMLInputElement).value })}
      />
      <label class="checkbox-row" for={inputId(`${at}.required`)}>
        <input
          id={inputId(`${at}.required`)}
          type="checkbox"
          checked={question.required}
          onChange={(e) => onChange({ ...question, required: (e.target as HTMLInputElement).checked })}
        />
        <span>Required</span>
      </label>
      {(question.type === "single_choice" || question.type === "multiple_choice") && (
        <OptionsFields question={question} index={index} errorAt={errorAt} onChange={onChange} />
      )}
    </li>
  );
}
