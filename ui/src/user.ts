// The signed-in member, for pages that show only what the member's role allows (docs/team.md):
// a viewer reads and changes nothing, so changing controls are hidden or shown read-only.
import { createContext } from "preact";
import { useContext } from "preact/hooks";

import type { User } from "./api";

export const UserContext = createContext<User | null>(null);

/** Whether the signed-in member may change things (owner and admins; not a viewer). */
export function useCanChange(): boolean {
  const user = useContext(UserContext);
  return !user || user.role !== "viewer";
}

/** What a viewer reads where changing controls are left out or shown read-only. */
export const VIEWER_NOTE = "You are a viewer of this site: you can read everything here but not change it. The owner or an admin can.";
