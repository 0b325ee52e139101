// Goals of a site (docs/reports.md "Goals"): what counts as a conversion.
import { request } from "../api";

export type MatchKind = "exact" | "prefix" | "glob";

export interface Goal {
  id: number;
  site_id: number;
  name: string;
  kind: "page" | "event";
  match?: MatchKind;
  path?: string;
  event?: string;
  prop?: { key: string; value: string };
  revenue?: { prop: string; currency: string };
  created_at: string;
}

export type GoalInput = Omit<Goal, "id" | "site_id" | "created_at">;

export const goals = {
  list: (siteId: number) => request<{ goals: Goal[] }>("GET", `/api/sites/${siteId}/goals`).then((r) => r.goals),
  create: (siteId: number, goal: GoalInput) => request<Goal>("POST", `/api/sites/${siteId}/goals`, goal),
  update: (id: number, goal: Partial<GoalInput> | Record<string, unknown>) => request<Goal>("PATCH", `/api/goals/${id}`, goal),
  remove: (id: number) => request<void>("DELETE", `/api/goals/${id}`),
};

/** One line describing what a goal counts. */
export function describeGoal(goal: Goal): string {
  if (goal.kind === "page") {
    const how = goal.match === "exact" ? "Visited" : goal.match === "prefix" ? "Visited a page starting with" : "Visited a page matching";
    return `${how} ${goal.path}`;
  }
  let text = `Sent the event ${goal.event}`;
  if (goal.prop) text += ` with ${goal.prop.key} = ${goal.prop.value}`;
  if (goal.revenue) text += `; revenue from ${goal.revenue.prop} in ${goal.revenue.currency}`;
  return text;
}
