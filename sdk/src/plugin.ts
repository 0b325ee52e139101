/**
 * The contract between the core script and its lazily loaded plugins
 * (`src/plugins/<name>.ts`, built to `analytics-<name>.js` and fetched from the same base URL).
 *
 * The core loads a plugin with a plain <script> element; the plugin's top level calls
 * `window.analytics._register("<name>", factory)` synchronously while it executes. The core then calls
 * `factory(host)` once and keeps the returned object. A plugin that fails to load or throws in its
 * factory counts as absent: `feedback()` resolves false, the `recording` connection shows `error`.
 *
 * - `recording` is loaded after the configuration when the site records, the visit is sampled
 *   (the visit's stable draw is below the site's rate) and the browser sends no DNT/GPC. The core shows `recording: "loading"` until
 *   the plugin calls `host.set_("recording", "ready")` (or `"error"`), and it reports `recordingId` in
 *   `getSessionContext()` only after the plugin calls `host.recording_(id)`, which it does once the
 *   server acknowledged the first chunk with a full snapshot.
 * - `survey` is loaded on the first `feedback(surveyId)` call when the `feedback` connection is ready;
 *   `open_(surveyId)` resolves true only when the widget is shown. The core has already checked that
 *   the SDK started and that no DNT/GPC signal is set; the plugin checks the id, publication, page
 *   targeting, earlier answers and other open surveys.
 * - `capture` (the autocapture loader, src/plugins/capture.ts) is loaded once the events connection is
 *   ready. It loads each capture plugin (`outbound-links`, `file-downloads`, `engagement`, `web-vitals`,
 *   `heatmaps`, `tagged`, `not-found`) when the snippet or the site's settings turn it on, or the page
 *   holds tagged elements or a not-found marker. It also opens the surveys of `config.surveys` after
 *   their delay, through `feedback(id)` (which checks targeting, earlier answers and privacy).
 *   Captures send events through `host.event_`, which the
 *   core stamps and delivers like any other, and `host.flush_()` when the page is being left.
 */
import type { Analytics, ConnectionState, Props, SessionContext } from "../analytics";

/** The answer of `GET {base}/i/config?key=KEY`. */
export interface Config {
  events: "ready" | "disabled";
  recording?: { enabled: boolean; sample_rate: number };
  feedback?: boolean;
  /** The site counts without storing anything on the device. */
  cookieless?: boolean;
  /** Captures the site's settings turn on, by plugin name ("outbound-links", "heatmaps", ...). */
  capture?: string[];
  /** File extensions the file-downloads capture counts (the site's list, or the default one). */
  file_download_extensions?: string[];
  /** Published surveys that open by themselves, each `delay_seconds` after the page loaded. */
  surveys?: { id: number; delay_seconds: number }[];
}

/** Where an event happened, when not on the current page (an SPA route already left). */
export interface At {
  url: string;
  path: string;
  title: string;
}

/**
 * What the core hands to a plugin. Its members (and the plugin's `open_`) end in "_": the build
 * shortens every such name to a letter or two in the core and every plugin alike (esbuild's
 * `mangleProps` with one shared cache, sdk/mangle-cache.json), which the core's budget needs.
 */
export interface Host {
  /** The site key from data-site. */
  key_: string;
  /** The Sightline base URL, ending in "/" (e.g. "https://analytics.example.com/"). */
  base_: string;
  /** The site's configuration as answered by the server. */
  config_: Config;
  /** The current visit; the same object `analytics.getSessionContext()` returns. */
  context_(): SessionContext;
  /** True under Do-Not-Track or Global Privacy Control. */
  privacy_(): boolean;
  /** Load the plugin `analytics-<name>.js` once (the `capture` loader loads the captures this way). */
  load_(name: string): Promise<Plugin | void>;
  /**
   * Queue an event (arguments already valid, as `analytics.event` checks them) stamped with the
   * visit and page; `at` replaces the page's url, path and title.
   */
  event_(name: string, props: Props, at?: At): void;
  /** Deliver what is waiting now with sendBeacon (the page is being hidden or left). */
  flush_(): void;
  /** Set the state of the plugin's own connection. */
  set_(connection: "recording" | "feedback", state: ConnectionState): void;
  /** Report the recording code once the recording has truly started (undefined when it stops). */
  recording_(id: string | undefined): void;
}

/** What a plugin's factory returns. */
export interface Plugin {
  /**
   * Survey plugin: show survey `surveyId` (the argument of `feedback()`, unchecked: the plugin
   * resolves false unless it is a non-empty string or a number); resolves true only when shown.
   */
  open_?(surveyId: unknown): Promise<boolean>;
}

export type PluginFactory = (host: Host) => Plugin;

/** `window.analytics` as plugins see it. */
export interface Core extends Analytics {
  _register(name: string, factory: PluginFactory): void;
}
