// Saved segments: a named set of filters per site, applied in one click, saved from the filters shown.
import { useState } from "preact/hooks";

import { messageOf } from "../api";
import { formMessage } from "../formMessages";
import { conversions, type Segment } from "../conversions/api";
import { useResource } from "../hooks";
import type { FilterName } from "./api";

interface Props {
  siteId: number;
  filters: Partial<Record<FilterName, string>>;
  onApply: (filters: Partial<Record<FilterName, string>>) => void;
}

function same(a: Record<string, string | undefined>, b: Record<string, string>): boolean {
  const keys = Object.keys(a).filter((k) => a[k]);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}

export function Segments({ siteId, filters, onApply }: Props) {
  const list = useResource(() => conversions.segments(siteId));
  const [naming, setNaming] = useState(false);
  const [name, setName] = useState("");
  const [error, setError] = useState<string | null>(null);
  const current: Segment | undefined = list.data?.find((s) => same(filters, s.filters));
  const hasFilters = Object.values(filters).some(Boolean);

  const save = async (event: SubmitEvent) => {
    event.preventDefault();
    setError(null);
    try {
      await conversions.saveSegment(siteId, name.trim(), filters as Record<string, string>);
      setNaming(false);
      setName("");
      await list.reload();
    } catch (failure) {
      setError(formMessage("segment", failure));
    }
  };
  const remove = async (segment: Segment) => {
    setError(null);
    try {
      await conversions.deleteSegment(segment.id);
      await list.reload();
    } catch (failure) {
      setError(messageOf(failure));
    }
  };

  return (
    <div class="report-segments">
      {list.data && list.data.length > 0 && (
        <label class="inline-select">
          Segment
          <select
            value={current ? String(current.id) : ""}
            onChange={(e) => {
              const chosen = list.data?.find((s) => String(s.id) === e.currentTarget.value);
              onApply(chosen ? (chosen.filters as Partial<Record<FilterName, string>>) : {});
            }}
          >
            <option value="">All visits</option>
            {list.data.map((s) => (
              <option key={s.id} value={String(s.id)}>
                {s.name}
              </option>
            ))}
          </select>
        </label>
      )}
      {current && (
        <button type="button" class="button button-quiet" onClick={() => void remove(current)}>
          Delete the segment {current.name}
        </button>
      )}
      {hasFilters && !current && !naming && (
        <button type="button" class="button button-quiet" onClick={() => setNaming(true)}>
          Save as a segment
        </button>
      )}
      {naming && (
        <form class="inline-form" onSubmit={save} aria-label="Save the filters as a segment">
          <label class="inline-select">
            Segment name
            <input type="text" value={name} maxLength={100} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <button type="submit" class="button" disabled={!name.trim()}>
            Save
          </button>
          <button type="button" class="button button-quiet" onClick={() => setNaming(false)}>
            Cancel
          </button>
        </form>
      )}
      {(error || list.error) && (
        <p class="field-error" role="alert">
          {error ?? list.error}
        </p>
      )}
    </div>
  );
}
