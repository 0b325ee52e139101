// An e-mail address, a domain or a path that may wrap only at its sensible points: after "@" and
// "/", before a dot, "?", "&" and "#"; never inside a word.
import { Fragment } from "preact";

/** The text with line-break opportunities at those points (a wbr each), never inside a word. */
export function Breakable({ text }: { text: string }) {
  const parts = text.split(/(?=[.?&#])|(?<=[@/])/);
  return (
    <span class="breakable">
      {parts.map((part, i) => (
        <Fragment key={i}>
          {i > 0 && <wbr />}
          {part}
        </Fragment>
      ))}
    </span>
  );
}
