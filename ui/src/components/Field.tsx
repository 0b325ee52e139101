import type { PartialInputHTMLAttributes } from "preact";

type InputProps = Omit<PartialInputHTMLAttributes<HTMLInputElement>, "id" | "label" | "role">;

interface FieldProps extends InputProps {
  id: string;
  label: string;
  hint?: string;
  error?: string | null;
  /** The id of a <datalist> of suggested values. */
  list?: string;
}

/** A labelled input with its hint and its error, both tied to the input for assistive technology. */
export function Field({ id, label, hint, error, class: className, type, ...input }: FieldProps) {
  const described = [hint ? `${id}-hint` : "", error ? `${id}-error` : ""].filter(Boolean).join(" ");
  return (
    <div class={`field${error ? " field-invalid" : ""}${className ? ` ${className}` : ""}`}>
      <label for={id}>{label}</label>
      {hint && (
        <p class="field-hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      <input
        id={id}
        type={(type ?? "text") as "text"}
        aria-invalid={error ? "true" : undefined} aria-describedby={described || undefined} {...input} />
      {error && (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}
