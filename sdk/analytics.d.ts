/**
 * Types for `window.analytics`, the Sightline browser SDK.
 *
 * Load the script with the snippet from the console:
 *   <script defer src="https://analytics.example.com/analytics.js" data-site="KEY"></script>
 * Optional attributes: data-consent="required" (collect nothing until `start()`),
 * data-auto-pageviews="false" (no automatic pageviews).
 *
 * Use in TypeScript: copy this file into your project (or reference it with
 * `/// <reference path="analytics.d.ts" />`); `window.analytics` and the global `analytics` are then typed.
 */

/** The state of one connection: `loading` while it starts, then `ready`, `error` or `disabled`. */
export type ConnectionState = "loading" | "ready" | "error" | "disabled";

/**
 * The connections of the SDK. Empty (`{}`) before `start()`; afterwards all three are present.
 * - `events`: custom events and pageviews. `error` when the server refused the site key or origin, or
 *   could not be reached (the SDK keeps retrying and turns `ready` when it can); `disabled` when the
 *   owner switched collection off.
 * - `recording`: session recording (a separate, lazily loaded script). `disabled` unless the site
 *   records, this visit is sampled, and the browser sends no Do-Not-Track or Global Privacy Control signal.
 * - `feedback`: feedback surveys. `ready` when the site has surveys and the browser sends no DNT/GPC.
 */
export interface Status {
  events?: ConnectionState;
  recording?: ConnectionState;
  feedback?: ConnectionState;
}

/** A property value: a string of at most 2000 characters, a finite number, or a boolean. */
export type PropValue = string | number | boolean;

/** Event properties: a plain object with at most 30 keys (at most 48 KiB as JSON). */
export type Props = { [key: string]: PropValue };

/** The campaign tags (`utm_*` query parameters) of the visit's landing page. */
export interface Utm {
  source?: string;
  medium?: string;
  campaign?: string;
  term?: string;
  content?: string;
}

/**
 * What the SDK knows about the current visit. Not proof of identity, and not proof that a recording
 * is ready. Before `start()` only `url`, `path`, `referrer` and `utm` are present.
 */
export interface SessionContext {
  /** The visit's code; a visit ends after 30 minutes without activity. */
  sessionId?: string;
  /** The visitor code (see `getVisitorId`). */
  visitorId?: string;
  /** When the visit started, ISO 8601 (UTC). */
  startedAt?: string;
  url: string;
  path: string;
  referrer: string;
  utm: Utm;
  /** Present only once a recording of this visit has actually started (its first chunk was stored). */
  recordingId?: string;
}

export interface Analytics {
  /**
   * Send a named event. `name` has 1 to 100 characters; `props` is a plain object (see `Props`).
   * Throws a TypeError naming the broken rule. Before `start()` under data-consent="required" the
   * call is ignored. Returning without an error does not mean the server stored the event.
   */
  event(name: string, props?: Props): void;
  /**
   * Replace the pseudonymous visitor code (1 to 200 characters). It must carry no personal data:
   * codes that look like an e-mail address or a phone number are refused with a TypeError.
   * Ignored before `start()` under data-consent="required".
   */
  identify(id: string): void;
  /**
   * Begin collection (call it after consent when the snippet has data-consent="required"; otherwise
   * the SDK starts itself). Every call returns the same Promise. It resolves, never rejects, with the
   * connection statuses once the site's configuration has been answered (or refused, or could not be
   * fetched: check `events` in the result).
   */
  start(): Promise<Status>;
  /** A copy of the current connection statuses; `{}` before start. */
  status(): Status;
  /** The visitor code, or undefined before start. */
  getVisitorId(): string | undefined;
  /** The current visit (see `SessionContext`). */
  getSessionContext(): SessionContext;
  /**
   * Open the published survey `surveyId` when it suits this page and visitor. Resolves `true` only when
   * the survey is shown; `false` before start, under Do-Not-Track or Global Privacy Control, when the
   * survey is not published, not targeted at this page, already answered, or another survey is open.
   * Never throws and never rejects.
   */
  feedback(surveyId: string): Promise<boolean>;
  /**
   * How many events were dropped because a queue was full: the queue before readiness (100 actions,
   * the oldest go first) or the outbox of unsent batches during a long outage (50 batches).
   */
  readonly dropped: number;
}

declare global {
  interface Window {
    analytics: Analytics;
  }
  // eslint-disable-next-line no-var
  var analytics: Analytics;
}
