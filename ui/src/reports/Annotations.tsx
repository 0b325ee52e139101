// The notes of the period under the graph: what its flags say, in words (the graph itself is a
// picture), and for owners and admins the way to add, change and remove them. A shared dashboard
// and a viewer see the notes only.
import { useState } from "preact/hooks";

import { api, messageOf } from "../api";
import { formMessage } from "../formMessages";
import { useResource } from "../hooks";
import { annotations, type Annotation } from "./notes";

interface Props {
  siteId: number;
  notes: Annotation[];
  /** The period's last day: where a new note starts. */
  lastDay: string;
  /** False on a shared dashboard: nothing there may change. */
  manage: boolean;
  onChanged: () => void;
}

const DAY = new Intl.DateTimeFormat(undefined, { weekday: "short", month: "short", day: "numeric", year: "numeric", timeZone: "UTC" });

function dayText(date: string): string {
  return DAY.format(new Date(`${date}T12:00:00Z`));
}

export function Annotations({ siteId, notes, lastDay, manage, onChanged }: Props) {
  const me = useResource(() => (manage ? api.me() : Promise.resolve(null)));
  const mayChange = manage && me.data != null && me.data.role !== "viewer";
  const [editing, setEditing] = useState<number | "new" | null>(null);
  const [problem, setProblem] = useState<string | null>(null);

  const remove = async (note: Annotation) => {
    setProblem(null);
    try {
      await annotations.remove(note.id);
      onChanged();
    } catch (failure) {
      setProblem(`The note could not be removed: ${messageOf(failure)}`);
    }
  };
  const saved = () => {
    setEditing(null);
    onChanged();
  };

  if (notes.length === 0 && !mayChange) return null;
  return (
    <section class="report-notes" aria-labelledby="report-notes-title">
      <h3 id="report-notes-title" class="visually-hidden">
        Notes on the graph
      </h3>
      {notes.length > 0 && (
        <ul class="report-notes-list">
          {notes.map((note) =>
            editing === note.id ? (
              <li key={note.id}>
                <NoteForm siteId={siteId} note={note} lastDay={lastDay} onSaved={saved} onCancel={() => setEditing(null)} />
              </li>
            ) : (
              <li key={note.id} class="report-note-item">
                <span class="report-note-mark" aria-hidden="true" />
                <time dateTime={note.date}>{dayText(note.date)}</time>
                <span class="report-note-text">{note.text}</span>
                {mayChange && (
                  <span class="report-note-actions">
                    <button type="button" class="link-button" onClick={() => setEditing(note.id)} aria-label={`Edit the note “${note.text}”`}>
                      Edit
                    </button>
                    <button type="button" class="link-button" onClick={() => void remove(note)} aria-label={`Remove the note “${note.text}”`}>
                      Remove
                    </button>
                  </span>
                )}
              </li>
            ),
          )}
        </ul>
      )}
      {mayChange && editing !== "new" && (
        <button type="button" class="button button-quiet report-note-add" onClick={() => setEditing("new")}>
          + Add a note to the graph
        </button>
      )}
      {editing === "new" && <NoteForm siteId={siteId} lastDay={lastDay} onSaved={saved} onCancel={() => setEditing(null)} />}
      {problem && (
        <p class="field-error" role="alert">
          {problem}
        </p>
      )}
    </section>
  );
}

interface FormProps {
  siteId: number;
  note?: Annotation;
  lastDay: string;
  onSaved: () => void;
  onCancel: () => void;
}

function NoteForm({ siteId, note, lastDay, onSaved, onCancel }: FormProps) {
  const [date, setDate] = useState(note?.date ?? lastDay);
  const [text, setText] = useState(note?.text ?? "");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const id = note ? `note-${note.id}` : "note-new";

  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    setError(null);
    setBusy(true);
    try {
      if (note) await annotations.update(note.id, { date, text });
      else await annotations.create(siteId, { date, text });
      onSaved();
    } catch (failure) {
      setError(formMessage("annotation", failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="inline-form report-note-form" onSubmit={submit} aria-label={note ? "Change the note" : "Add a note to the graph"}>
      <div class="field">
        <label for={`${id}-date`}>Day</label>
        <input id={`${id}-date`} type="date" required value={date} min="2000-01-01" max="2099-12-31" onInput={(e) => setDate(e.currentTarget.value)} />
      </div>
      <div class="field report-note-field">
        <label for={`${id}-text`}>What happened</label>
        <input
          id={`${id}-text`}
          type="text"
          required
          maxLength={500}
          placeholder="Launched the new pricing page"
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
          aria-invalid={error ? "true" : undefined}
          aria-describedby={error ? `${id}-error` : undefined}
        />
      </div>
      <button type="submit" class="button" disabled={busy || !text.trim() || !date}>
        {note ? "Save" : "Add the note"}
      </button>
      <button type="button" class="button button-quiet" onClick={onCancel}>
        Cancel
      </button>
      {error && (
        <p class="field-error" id={`${id}-error`} role="alert">
          {error}
        </p>
      )}
    </form>
  );
}
