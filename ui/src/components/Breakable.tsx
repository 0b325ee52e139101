// An e-mail address or a domain that may wrap only at its sensible points: after "@", before a dot.
import { Fragment } from "preact";

/** The text with line-break opportunities after "@" and before each "."; never inside a word. */
export function Breakable({ text }: { text: string }) {
  const parts = text.split(/(?=\.)|(?<=@)/);
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
