// Where keyboard focus goes when the page changes: to the new page's heading, so that screen
// readers announce it and Tab continues from the top of the new content.

let pending = false;

/** Ask the next page that mounts to take focus (used when the whole frame changes, e.g. after login). */
export function focusNextHeading(): void {
  pending = true;
}

export function takeHeadingFocus(): boolean {
  const wanted = pending;
  pending = false;
  return wanted;
}

export function focusHeading(): void {
  document.querySelector<HTMLElement>("main h1")?.focus();
}
