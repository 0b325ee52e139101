/**
 * The recorder: rrweb events of this tab's visit, cut into numbered chunks and uploaded.
 *
 * A recording belongs to one visit in one tab: its id and next seq live in sessionStorage, so the
 * next page of the tab continues it (each page starts with a full snapshot); a new visit (30 minutes
 * without activity) starts a new recording. Chunks are cut every 5 s, at 512 KiB of JSON, and when
 * the page is hidden. `recordingId` is reported to the core (and `recording` becomes `ready`) only
 * once the server acknowledged a chunk of this page that holds its full snapshot.
 */
import { record } from "@rrweb/record";

import type { Host } from "../plugin";
import { privacy } from "./options";
import { type Chunk, type Outcome, Uploader } from "./upload";

interface Saved {
  /** Visit (session) id. */
  s: string;
  /** Recording id. */
  r: string;
  /** Next chunk number. */
  n: number;
}

const INTERVAL = 5e3;
const MAX_TEXT = 512 * 1024;
const FULL_SNAPSHOT = 2;
const META = 4;

const rid = (): string => Array.from(crypto.getRandomValues(new Uint8Array(21)), (b) => (b % 36).toString(36)).join("");

export const startRecording = (host: Host): void => {
  const storeKey = "sightline_rec_" + host.key_;
  const load = (): Saved | undefined => {
    try {
      return JSON.parse(sessionStorage.getItem(storeKey)!) || undefined;
    } catch {
      return undefined;
    }
  };
  const save = (): void => {
    try {
      sessionStorage.setItem(storeKey, JSON.stringify(saved));
    } catch {}
  };

  let visit = host.context_();
  const previous = load();
  let saved: Saved =
    previous && previous.s == visit.sessionId && typeof previous.r == "string" && previous.n >= 0
      ? previous
      : { s: visit.sessionId!, r: rid(), n: 0 };
  save();

  let events: string[] = [];
  let size = 0;
  let snapshot = false;
  let stopped = false;
  let lastHref = "";
  let stop: (() => void) | undefined;

  const halt = (state?: "disabled" | "error"): void => {
    stopped = true;
    stop?.();
    uploader.clear();
    events = [];
    if (state) host.set_("recording", state);
  };

  const done = (chunk: Chunk, outcome: Outcome): void => {
    if (outcome.ok) {
      if (chunk.snapshot && outcome.snapshot && chunk.rid == saved.r && !stopped) {
        host.recording_(chunk.rid);
        host.set_("recording", "ready");
      }
      return;
    }
    if (outcome.code == "collection_disabled" || outcome.code == "recording_disabled") halt("disabled");
    else if (outcome.code == "recording_too_large") halt();
    else if (outcome.status == 403 || outcome.status == 404) halt("error");
    else if (outcome.code == "recording_conflict" && chunk.rid == saved.r) renew();
    else if (chunk.snapshot && chunk.rid == saved.r) halt("error");
  };
  const uploader = new Uploader(host.base_, host.key_, done);

  /** Cut what was recorded into the next chunk of the current recording. */
  const cut = (): void => {
    if (!events.length) return;
    const text = `{"session_id":${JSON.stringify(saved.s)},"visitor_id":${JSON.stringify(visit.visitorId || "")},"events":[${events.join(",")}]}`;
    uploader.add({ rid: saved.r, seq: saved.n++, text, snapshot });
    save();
    events = [];
    size = 0;
    snapshot = false;
  };

  /** A new recording (new visit, or the id was taken): it starts with a full snapshot. */
  const renew = (): void => {
    host.recording_(undefined);
    saved = { s: visit.sessionId!, r: rid(), n: 0 };
    save();
    record.takeFullSnapshot(true);
  };

  const tick = (): void => {
    if (stopped) return;
    cut();
    const now = host.context_();
    if (now.sessionId && now.sessionId != saved.s) {
      visit = now;
      renew();
    }
  };

  const emit = (event: { type: number; timestamp: number; data?: unknown }): void => {
    if (stopped) return;
    if (event.type == META) lastHref = location.href;
    else if (lastHref && location.href != lastHref) {
      lastHref = location.href;
      record.addCustomEvent("page", { href: lastHref });
    }
    const text = JSON.stringify(event);
    events.push(text);
    size += text.length;
    if (event.type == FULL_SNAPSHOT) snapshot = true;
    if (size > MAX_TEXT) cut();
  };

  const hidden = (): void => {
    if (stopped) return;
    // Marks when the visitor left or hid the page: a visit with no interaction after the first
    // snapshot still lasts as long as it did (not "0 s"), and the replay runs to this moment.
    record.addCustomEvent("hidden", {});
    cut();
    uploader.beacon();
  };

  stop = record({ ...privacy, emit });
  if (!stop) return halt("error");
  setInterval(tick, INTERVAL);
  addEventListener("visibilitychange", () => document.visibilityState == "hidden" && hidden(), true);
  addEventListener("pagehide", hidden, true);
};
