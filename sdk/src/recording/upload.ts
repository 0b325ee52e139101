/**
 * Uploading chunks: `POST {base}i/recordings/{rid}/chunks?key=KEY&seq=N`, body gzip JSON
 * `{"session_id", "visitor_id", "events": [...]}` compressed with CompressionStream.
 *
 * Chunks go one at a time in seq order; a chunk keeps its seq across retries, beacons and reloads,
 * so the server stores it once. Network errors, 5xx and 429 (honouring Retry-After) are retried with
 * exponential backoff and jitter; other refusals end the chunk (or the recording, see `Outcome`).
 * When the page is hidden every waiting chunk is also handed to sendBeacon: the page may never run
 * again, and if it does, the fetch that follows is answered as a duplicate.
 */

export interface Chunk {
  rid: string;
  seq: number;
  /** The JSON text. */
  text: string;
  /** What is sent: the gzip bytes once compressed (the text where the browser cannot compress). */
  body?: ArrayBuffer | string;
  snapshot: boolean;
}

/** How the server answered a chunk: stored (with `snapshot` = the recording holds a full snapshot) or refused. */
export type Outcome = { ok: true; snapshot: boolean } | { ok: false; status: number; code: string };

const KEEPALIVE_MAX = 60000;

export const gzip = async (text: string): Promise<ArrayBuffer | undefined> => {
  if (typeof CompressionStream != "function") return undefined;
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Response(stream).arrayBuffer();
};

export class Uploader {
  private queue: Chunk[] = [];
  private busy = false;
  private timer = 0;
  private attempt = 0;

  constructor(
    private readonly base: string,
    private readonly key: string,
    private readonly done: (chunk: Chunk, outcome: Outcome) => void,
  ) {}

  url(chunk: Chunk): string {
    return `${this.base}i/recordings/${chunk.rid}/chunks?key=${encodeURIComponent(this.key)}&seq=${chunk.seq}`;
  }

  add(chunk: Chunk): void {
    this.queue.push(chunk);
    gzip(chunk.text)
      .catch(() => undefined)
      .then((body) => {
        chunk.body = body || chunk.text;
        chunk.text = "";
        this.pump();
      });
  }

  clear(): void {
    this.queue = [];
    clearTimeout(this.timer);
  }

  /** Every waiting chunk to sendBeacon (the page is hidden or going away). */
  beacon(): void {
    for (const chunk of this.queue) navigator.sendBeacon(this.url(chunk), chunk.body || chunk.text);
  }

  private pump(): void {
    const chunk = this.queue[0];
    const body = chunk?.body;
    if (this.busy || this.timer || !body) return;
    this.busy = true;
    const size = typeof body == "string" ? body.length * 3 : body.byteLength;
    const retry = (after?: string | null): void => {
      this.busy = false;
      const wait = after && +after >= 0 ? +after * 1e3 : Math.min(6e4, 1e3 * 2 ** this.attempt++) * (0.5 + Math.random() / 2);
      this.timer = setTimeout(() => ((this.timer = 0), this.pump()), wait);
    };
    const settle = (outcome: Outcome): void => {
      this.busy = false;
      this.attempt = 0;
      this.queue = this.queue.filter((c) => c != chunk);
      this.done(chunk, outcome);
      this.pump();
    };
    fetch(this.url(chunk), { method: "POST", body, keepalive: size < KEEPALIVE_MAX, credentials: "omit" })
      .then((r) => {
        if (r.status == 429 || r.status > 499) return retry(r.headers.get("retry-after"));
        return r
          .json()
          .catch(() => ({}))
          .then((j) =>
            settle(r.ok ? { ok: true, snapshot: j.snapshot === true } : { ok: false, status: r.status, code: j.error?.code || "" }),
          );
      }, () => retry())
      .catch(() => undefined);
  }

}
