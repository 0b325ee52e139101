/**
 * `analytics-outbound-links.js`: clicks on links to another site, as `outbound_link` events with the
 * link's `url` (scheme, host and path: no query or fragment). The listener sits on the document, so
 * links added after load count too; primary clicks (also with Ctrl/Cmd/Shift, opening a new tab or
 * window) and middle clicks count. When the click leaves the page, the core hands the event to
 * sendBeacon as the page goes (pagehide), so it survives the navigation.
 */
import { bare, onLink } from "../capture/common";
import type { Core } from "../plugin";

const site = (host: string): string => host.replace(/^www\./, "");

(window.analytics as Core)._register("outbound-links", (host) => {
  onLink((url) => {
    if (site(url.host) != site(location.host)) host.event_("outbound_link", { url: bare(url) });
  });
  return {};
});
