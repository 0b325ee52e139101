/**
 * `analytics-file-downloads.js`: clicks on links to files, as `file_download` events with the file's
 * `url` (scheme, host and path). A link is a download when it has the `download` attribute or its
 * path ends in one of the extensions: the snippet's `data-file-downloads="pdf,zip"` list when it
 * names some, else the site's list from its settings (the server's default list unless the owner
 * changed it). Same-site and other-site files both count; primary and middle clicks, and links added
 * after load, as for outbound links.
 */
import { attr, bare, onLink } from "../capture/common";
import type { Core } from "../plugin";

(window.analytics as Core)._register("file-downloads", (host) => {
  const given = (attr(host, "file-downloads") || "")
    .split(",")
    .map((e) => e.trim().replace(/^\./, "").toLowerCase())
    .filter(Boolean);
  const extensions = new Set(given.length ? given : host.config_.file_download_extensions || []);
  onLink((url, target) => {
    const name = url.pathname.slice(url.pathname.lastIndexOf("/") + 1);
    const dot = name.lastIndexOf(".");
    const extension = dot > 0 ? name.slice(dot + 1).toLowerCase() : "";
    if (extensions.has(extension) || target.closest?.("a[download],area[download]"))
      host.event_("file_download", { url: bare(url) });
  });
  return {};
});
