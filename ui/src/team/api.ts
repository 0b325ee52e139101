// The team API (docs/team.md, docs/stats-api.md): members, invitations and API keys with their scopes.
import { request, type Role } from "../api";

export interface Member {
  id: number;
  email: string;
  role: Role;
  site_ids: number[] | null;
  created_at: string;
  last_seen_at: string | null;
  /** What the member made that grants access and ends when they are removed (null: the owner). */
  grants: { invitations: number; api_keys: number; shares: number } | null;
}

export interface Invitation {
  id: number;
  email: string;
  role: Exclude<Role, "owner">;
  site_ids: number[] | null;
  created_at: string;
  expires_at: string;
  /** Only in the answer that created it. */
  url?: string;
  /** Whether the link was e-mailed to the invitee (with --smtp-url), in the same answer. */
  email_sent?: boolean;
}

/** What a key may do (docs/stats-api.md, "Scopes"), in the order the API lists them. */
export const SCOPES = ["stats:read", "sites:read", "sites:write", "events:write"] as const;
export type Scope = (typeof SCOPES)[number];

export interface ApiKey {
  id: number;
  name: string;
  site_id: number | null;
  scopes: Scope[];
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  /** Only in the answer that created it. */
  key?: string;
}

export interface InvitationInfo {
  email: string;
  role: Exclude<Role, "owner">;
  team: string;
  expires_at: string;
}

export const team = {
  members: () => request<{ members: Member[] }>("GET", "/api/members").then((r) => r.members),
  updateMember: (id: number, changes: { role?: string; site_ids?: number[] | null }) =>
    request<Member>("PATCH", `/api/members/${id}`, changes),
  removeMember: (id: number) => request<void>("DELETE", `/api/members/${id}`),
  invitations: () => request<{ invitations: Invitation[] }>("GET", "/api/invitations").then((r) => r.invitations),
  invite: (email: string, role: string, siteIds: number[] | null) =>
    request<Invitation>("POST", "/api/invitations", siteIds ? { email, role, site_ids: siteIds } : { email, role }),
  withdraw: (id: number) => request<void>("DELETE", `/api/invitations/${id}`),
  lookup: (token: string) => request<InvitationInfo>("POST", "/api/invitations/lookup", { token }),
  accept: (token: string, password: string) => request<unknown>("POST", "/api/invitations/accept", { token, password }),
  keys: () => request<{ keys: ApiKey[] }>("GET", "/api/keys").then((r) => r.keys),
  createKey: (name: string, siteId: number | null, scopes: Scope[]) =>
    request<ApiKey>("POST", "/api/keys", siteId === null ? { name, scopes } : { name, site_id: siteId, scopes }),
  revokeKey: (id: number) => request<void>("DELETE", `/api/keys/${id}`),
};
