// One recording in rrweb-player: play and pause, speed, skip inactivity, a timeline with the page
// changes marked, and the list of pages to jump to. The replay is rebuilt in rrweb's sandboxed
// iframe (sandbox="allow-same-origin", never allow-scripts): nothing of the recorded page runs.
import { useEffect, useRef, useState } from "preact/hooks";
import { useLocation, useRoute } from "preact-iso";
import Player from "rrweb-player";

import { ApiError, messageOf } from "../api";
import { Notice } from "../components/Notice";
import { Page } from "../components/Page";
import { useCanChange } from "../user";
import { bytes, count, dateTime } from "../format";
import { duration, length, type RecordedEvent, type RecordingDetails, recordingsApi } from "./api";
import { PAGE_TAG, type PageChange, pageChanges, shortPath, withPageMarks } from "./timeline";

const SPEEDS = [1, 2, 4, 8];
const CONTROLLER_HEIGHT = 80;

/** The replay needs the CSP its address is served with; a client-side visit here reloads the page. */
function loadedHere(): boolean {
  const entry = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming | undefined;
  try {
    return !entry || new URL(entry.name).pathname.startsWith("/recordings");
  } catch {
    return true;
  }
}

export function PlayerPage() {
  const { params } = useRoute();
  const id = params.id ?? "";
  const [details, setDetails] = useState<RecordingDetails | null>(null);
  const [events, setEvents] = useState<RecordedEvent[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    if (!loadedHere()) {
      location.reload();
      return;
    }
    let alive = true;
    Promise.all([recordingsApi.get(id), recordingsApi.events(id)]).then(
      ([d, e]) => {
        if (!alive) return;
        setDetails(d);
        setEvents(e);
      },
      (failure) => {
        if (!alive || (failure instanceof ApiError && failure.status === 401)) return;
        setError(failure instanceof ApiError && failure.status === 404 ? "This recording does not exist or was deleted." : messageOf(failure));
      },
    );
    return () => {
      alive = false;
    };
  }, [id]);

  // A viewer may not delete a recording: the button is left out.
  const canChange = useCanChange();
  const back = { href: details ? `/recordings?site=${details.site_id}` : "/recordings", label: "Recordings" };
  return (
    <Page
      title="Recording"
      back={back}
      subtitle={details && <Facts details={details} />}
      actions={details && canChange && <DeleteButton id={details.id} siteId={details.site_id} />}
    >
      {error && <Notice kind="error">{error}</Notice>}
      {!error && !events && <p class="loading">Loading the recording…</p>}
      {events && events.length < 2 && <Notice kind="info">This recording holds nothing to replay.</Notice>}
      {events && events.length >= 2 && <Replay events={events} />}
    </Page>
  );
}

function Facts({ details }: { details: RecordingDetails }) {
  return (
    <span class="recording-facts">
      {dateTime(details.started_at)} · {length(details.duration_ms)} · {count(details.pages)}{" "}
      {details.pages === 1 ? "page" : "pages"} · {bytes(details.size_bytes)} · visitor{" "}
      <code>{details.visitor_id}</code>
    </span>
  );
}

/** The replay's size in the panel's content box (its padding left out), the controls below it. */
function playerSize(panel: HTMLElement): { width: number; height: number } {
  const style = getComputedStyle(panel);
  const inner = panel.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  const width = Math.max(240, Math.floor(inner));
  const height = Math.max(240, Math.min(window.innerHeight - 260, Math.round(width * 0.62)));
  return { width, height: height - CONTROLLER_HEIGHT };
}

function Replay({ events }: { events: RecordedEvent[] }) {
  const host = useRef<HTMLDivElement>(null);
  const player = useRef<Player | null>(null);
  const [pages] = useState<PageChange[]>(() => pageChanges(events));

  useEffect(() => {
    const target = host.current;
    if (!target) return;
    const { width, height } = playerSize(target);
    const instance = new Player({
      target,
      props: {
        events: withPageMarks(events) as any,
        width,
        height,
        autoPlay: false,
        skipInactive: true,
        speedOption: SPEEDS,
        showController: true,
        tags: { [PAGE_TAG]: "#e07a5f" },
        mouseTail: false,
        UNSAFE_replayCanvas: false,
      },
    });
    player.current = instance;
    describeControls(target, instance);
    target.dataset.state = "ready";
    // A phone turned or a window narrowed: the player (and its controls) fits the panel again.
    let shown = width;
    const resized = new ResizeObserver(() => {
      const next = playerSize(target);
      if (next.width === shown) return;
      shown = next.width;
      (instance as unknown as { $set(props: { width: number; height: number }): void }).$set(next);
      instance.triggerResize();
    });
    resized.observe(target);
    return () => {
      resized.disconnect();
      player.current = null;
      delete target.dataset.state;
      (instance as unknown as { $destroy(): void }).$destroy();
    };
  }, [events]);

  return (
    <>
      <div class="panel recording-player" ref={host} />
      {pages.length > 0 && (
        <section class="panel recording-pages" aria-labelledby="recording-pages-title">
          <h2 id="recording-pages-title">Pages</h2>
          <ol>
            {pages.map((p, i) => (
              <li key={i}>
                <button type="button" class="link-button" onClick={() => player.current?.goto(p.offset, false)} title={p.href}>
                  <span class="recording-at">{duration(p.offset)}</span> {shortPath(p.href)}
                </button>
              </li>
            ))}
          </ol>
        </section>
      )}
    </>
  );
}

/**
 * rrweb-player's controls, made usable with a screen reader and the keyboard: names on the icon
 * buttons and the switch, a title on the replay's frame, and the replayed page taken out of the
 * focus order (it is a picture of the visit, not something to interact with).
 */
function describeControls(target: HTMLElement, instance: Player): void {
  const buttons = Array.from(target.querySelectorAll<HTMLButtonElement>(".rr-controller__btns > button"));
  const play = buttons[0];
  const fullscreen = buttons.length > 1 ? buttons[buttons.length - 1] : undefined;
  if (play) play.setAttribute("aria-label", "Play");
  if (fullscreen) fullscreen.setAttribute("aria-label", "Full screen");
  for (const button of buttons.slice(1, -1)) button.setAttribute("aria-label", `Speed ${button.textContent?.trim() ?? ""}`);
  target.querySelector<HTMLInputElement>(".rr-controller__btns input[type=checkbox]")?.setAttribute("aria-label", "Skip inactivity");
  const frame = target.querySelector<HTMLIFrameElement>(".replayer-wrapper iframe");
  if (frame) {
    frame.title = "Replay of the visit";
    frame.tabIndex = -1;
  }
  target.querySelector(".replayer-wrapper")?.setAttribute("inert", "");
  instance.addEventListener("ui-update-player-state", (event: unknown) => {
    const state = typeof event === "string" ? event : (event as { payload?: string } | null)?.payload;
    play?.setAttribute("aria-label", state === "playing" ? "Pause" : "Play");
  });
}

function DeleteButton({ id, siteId }: { id: string; siteId: number }) {
  const location = useLocation();
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const remove = async () => {
    setBusy(true);
    try {
      await recordingsApi.remove(id);
      location.route(`/recordings?site=${siteId}`);
    } catch (failure) {
      setError(messageOf(failure));
      setBusy(false);
    }
  };
  if (!asking)
    return (
      <button type="button" class="button" onClick={() => setAsking(true)}>
        Delete
      </button>
    );
  return (
    <span class="recording-delete" role="group" aria-label="Delete this recording?">
      {error && <span class="recording-delete-error">{error}</span>}
      <span>Delete this recording for good?</span>
      <button type="button" class="button button-danger" disabled={busy} onClick={() => void remove()}>
        {busy ? "Deleting…" : "Delete"}
      </button>
      <button type="button" class="button" disabled={busy} onClick={() => setAsking(false)}>
        Keep
      </button>
    </span>
  );
}
