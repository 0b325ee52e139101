/** The Sightline mark: an eye-shaped lens over a rising line. */
export function Logo() {
  return (
    <svg class="logo" viewBox="0 0 32 32" width="28" height="28" aria-hidden="true" focusable="false">
      <rect width="32" height="32" rx="8" class="logo-bg" />
      <path d="M6 21l6-6 5 4 9-9" class="logo-line" fill="none" stroke-width="3" stroke-linecap="round" stroke-linejoin="round" />
      <circle cx="26" cy="10" r="2.5" class="logo-dot" />
    </svg>
  );
}
