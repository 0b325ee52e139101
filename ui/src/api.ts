// The console API client: JSON in and out, the error shape of the API as ApiError, and one place
// that reacts to 401 (the session ended) by sending the owner to the login screen.

export type Role = "owner" | "admin" | "viewer";

export interface User {
  id: number;
  email: string;
  created_at: string;
  role: Role;
}

export type ConnectionState = "pending" | "connected" | "error" | "disabled";
export type CheckError = "unreachable" | "timeout" | "snippet_not_found" | "key_mismatch" | "blocked_address";

export type WeekStart = "monday" | "sunday" | "saturday";

export interface Site {
  id: number;
  name: string;
  domain: string;
  key: string;
  snippet: string;
  collection_enabled: boolean;
  recording_enabled: boolean;
  recording_sample_rate: number;
  /** IANA zone of the site's reports (days, hours, the default custom range). */
  timezone: string;
  /** The first day of the site's weeks (weekly retention cohorts). */
  week_start: WeekStart;
  /** What the SDK captures by itself on the site's pages (docs/sdk.md#autocapture). */
  autocapture: Autocapture;
  /** Counted without storing anything on the visitor's device. */
  cookieless: boolean;
  /** Client addresses and CIDR ranges whose events are not stored. */
  excluded_addresses: string[];
  /** Days events and survey responses are kept; null: the server's setting. */
  retention_days: number | null;
  /** Referrer hosts (and their subdomains) whose visits this site drops as spam. */
  blocked_referrers: string[];
  created_at: string;
  connection: {
    state: ConnectionState;
    first_event_at: string | null;
    last_event_at: string | null;
    last_check_at: string | null;
    last_check_error: CheckError | string | null;
  };
}

export interface Autocapture {
  outbound_links: boolean;
  file_downloads: boolean;
  engagement: boolean;
  web_vitals: boolean;
  heatmaps: boolean;
  file_download_extensions: string[];
}

/** What PATCH /api/sites/{id} may change: every field but the identity and the server's state. */
export type SiteChanges = Partial<
  Omit<Site, "id" | "domain" | "key" | "snippet" | "created_at" | "connection" | "autocapture">
> & {
  /** Any of the switches; `file_download_extensions: null` restores the default list. */
  autocapture?: Partial<Omit<Autocapture, "file_download_extensions">> & { file_download_extensions?: string[] | null };
};

export type ServiceStatus = "ok" | "degraded" | "down";

export interface Health {
  status: ServiceStatus;
  services: Record<string, { status: ServiceStatus; latency_ms: number; [figure: string]: unknown }>;
  version: string;
  checked_at: string;
}

/** A failed request: the API's error code and message, the field at fault, and Retry-After. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field: string | null = null,
    readonly retryAfter: number | null = null,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

type Unauthorized = () => void;
let onUnauthorized: Unauthorized = () => undefined;

/** Registers what happens when any request (login aside) answers 401. */
export function handleUnauthorized(handler: Unauthorized): void {
  onUnauthorized = handler;
}

const UNREACHABLE = "The server could not be reached. Check the connection and try again.";

export async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      credentials: "same-origin",
      cache: "no-store",
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, "network_error", UNREACHABLE);
  }
  if (response.status === 204) return undefined as T;
  let payload: unknown = null;
  try {
    payload = await response.json();
  } catch {
    payload = null;
  }
  if (response.ok) return payload as T;
  const error = (payload as { error?: { code?: string; message?: string; field?: string } } | null)?.error;
  const retry = Number.parseInt(response.headers.get("Retry-After") ?? "", 10);
  const failure = new ApiError(
    response.status,
    error?.code ?? "http_error",
    error?.message ?? `The server answered with HTTP ${response.status}.`,
    error?.field ?? null,
    Number.isFinite(retry) ? retry : null,
  );
  if (response.status === 401 && path !== "/api/login" && !path.startsWith("/api/invitations/")) onUnauthorized();
  throw failure;
}

/** Sends a file as the request's body (an import), reporting how much of it was sent. */
export function upload<T>(path: string, file: Blob, contentType: string, onProgress: (fraction: number) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", path);
    xhr.setRequestHeader("Content-Type", contentType);
    xhr.setRequestHeader("Accept", "application/json");
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable && event.total > 0) onProgress(event.loaded / event.total);
    };
    xhr.onerror = () => reject(new ApiError(0, "network_error", UNREACHABLE));
    xhr.onload = () => {
      let payload: unknown = null;
      try {
        payload = JSON.parse(xhr.responseText);
      } catch {
        payload = null;
      }
      if (xhr.status >= 200 && xhr.status < 300) {
        resolve(payload as T);
        return;
      }
      const error = (payload as { error?: { code?: string; message?: string; field?: string } } | null)?.error;
      if (xhr.status === 401) onUnauthorized();
      reject(
        new ApiError(
          xhr.status,
          error?.code ?? "http_error",
          error?.message ?? `The server answered with HTTP ${xhr.status}.`,
          error?.field ?? null,
        ),
      );
    };
    xhr.send(file);
  });
}

export const api = {
  login: (email: string, password: string) =>
    request<{ user: User }>("POST", "/api/login", { email, password }),
  logout: () => request<void>("POST", "/api/logout", {}),
  me: () => request<User>("GET", "/api/me"),
  sites: () => request<{ sites: Site[] }>("GET", "/api/sites").then((r) => r.sites),
  /** One site of the owner's, or null when there is none with this id. */
  site: (id: number) =>
    request<{ sites: Site[] }>("GET", "/api/sites").then((r) => r.sites.find((s) => s.id === id) ?? null),
  createSite: (name: string, domain: string) => request<Site>("POST", "/api/sites", { name, domain }),
  updateSite: (id: number, changes: SiteChanges) => request<Site>("PATCH", `/api/sites/${id}`, changes),
  deleteSite: (id: number) => request<void>("DELETE", `/api/sites/${id}`),
  retrySite: (id: number) => request<Site>("POST", `/api/sites/${id}/retry`, {}),
  health: () => request<Health>("GET", "/api/health"),
  eraseVisitor: (siteId: number, visitor: string) =>
    request<{ erasure: Erasure }>("DELETE", `/api/sites/${siteId}/visitors/${encodeURIComponent(visitor)}`).then(
      (r) => r.erasure,
    ),
  erasures: (siteId: number) =>
    request<{ erasures: Erasure[] }>("GET", `/api/sites/${siteId}/erasures`).then((r) => r.erasures),
  exportVisitor: (siteId: number, visitor: string) =>
    request<VisitorExport>("GET", `/api/sites/${siteId}/visitors/${encodeURIComponent(visitor)}/export`),
};

/** Everything stored about one visitor code (docs/privacy.md). */
export interface VisitorExport {
  events_total: number;
  events: unknown[];
  recordings: unknown[];
  survey_responses: unknown[];
  [field: string]: unknown;
}

/** One visitor erasure, as recorded: never the visitor's code. */
export interface Erasure {
  id: number;
  site_id: number;
  status: string;
  requested_by: number | null;
  created_at: string;
  finished_at: string | null;
  events_removed: number;
  recordings_removed: number;
  responses_removed: number;
  store: "pending" | "done";
}

/** A message for any failure: the API's own sentence, or a generic one for unexpected errors. */
export function messageOf(error: unknown): string {
  if (error instanceof ApiError && error.code === "database_unavailable") {
    return `${error.message} The Health page says what is wrong and what to do.`;
  }
  if (error instanceof ApiError) return error.message;
  return "Something went wrong in the console. Reload the page and try again.";
}
