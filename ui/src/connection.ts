// What a site's connection state and the connection check's error codes mean, in words.
import type { ConnectionState, Site } from "./api";

export const STATE_SUMMARY: Record<ConnectionState, string> = {
  pending: "Waiting for the first event. Install the snippet, then check the connection.",
  connected: "Sightline receives data from this site.",
  error: "The last connection check failed.",
  disabled: "Collection is switched off: Sightline refuses this site's events.",
};

/** The state in words; "connected" by a check alone (no event yet) says just that. */
export function stateSummary(site: Site): string {
  const { state, last_event_at: lastEvent } = site.connection;
  if (state === "connected" && !lastEvent) {
    return "The snippet is on the site's home page. Events appear as soon as visitors arrive.";
  }
  return STATE_SUMMARY[state];
}

const CHECK_ERRORS: Record<string, (domain: string) => string> = {
  unreachable: (domain) =>
    `Sightline could not load the home page of ${domain}: the name does not resolve, the connection ` +
    "failed, the page answered with an error, or it redirects to another host.",
  timeout: (domain) => `The home page of ${domain} did not answer within the time limit of the check.`,
  snippet_not_found: (domain) =>
    `The home page of ${domain} loaded, but it has no Sightline snippet. Paste the snippet into the ` +
    "page's <head>, publish it, and check again.",
  key_mismatch: (domain) =>
    `The home page of ${domain} has a Sightline snippet with another site's key. Replace it with ` +
    "this site's snippet.",
  blocked_address: (domain) =>
    `${domain} resolves to a private or reserved network address, which the connection check does ` +
    "not visit. Use the site's public domain; for a site on your own machine or network, start " +
    "Sightline with --allow-private-addresses (or SIGHTLINE_ALLOW_PRIVATE_ADDRESSES=true).",
};

/** The sentence for a check error code; unknown codes are named as they are. */
export function checkErrorText(code: string, domain: string): string {
  const explain = CHECK_ERRORS[code];
  return explain ? explain(domain) : `The check failed (${code}).`;
}

/**
 * What the owner typed or pasted as a domain, cleaned the way the API wants it: a pasted address
 * ("http://127.0.0.1:8732/shop?x") becomes its host and port ("127.0.0.1:8732"). Anything that is
 * not an http(s) address is sent as typed, and the API explains what is wrong with it.
 */
export function cleanDomain(raw: string): string {
  const text = raw.trim();
  if (!/^https?:\/\//i.test(text)) return text.replace(/\/+$/, "");
  try {
    return new URL(text).host;
  } catch {
    return text;
  }
}

/** The snippet, optionally waiting for the visitor's consent before collecting anything. */
export function snippetFor(site: Site, consent: boolean, noscript = false): string {
  if (consent) return site.snippet.replace("></script>", ' data-consent="required"></script>');
  return noscript ? `${site.snippet}\n${noscriptFor(site)}` : site.snippet;
}

/** The no-JavaScript pixel (docs/ingest.md#pixel): the page's address travels as its referrer. */
export function noscriptFor(site: Site): string {
  const base = /src="([^"]+)\/analytics\.js"/.exec(site.snippet)?.[1] ?? "";
  return `<noscript><img src="${base}/i/pixel.gif?key=${site.key}" alt="" width="1" height="1" referrerpolicy="no-referrer-when-downgrade"></noscript>`;
}
