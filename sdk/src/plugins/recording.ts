/**
 * `analytics-recording.js`: the session recorder, loaded by the core only when the site records,
 * this visit is sampled, the browser sends no DNT/GPC signal and collection has started.
 */
import type { Core } from "../plugin";
import { startRecording } from "../recording/recorder";

(window.analytics as Core)._register("recording", (host) => {
  if (host.privacy_()) host.set_("recording", "disabled");
  else {
    try {
      startRecording(host);
    } catch {
      host.set_("recording", "error");
    }
  }
  return {};
});
