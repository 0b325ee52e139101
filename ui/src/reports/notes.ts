// Notes on a site's graph (docs/reports.md "Annotations"): a day and a line of text.
import { request } from "../api";

export interface Annotation {
  id: number;
  site_id: number;
  /** A day of the site's calendar, YYYY-MM-DD. */
  date: string;
  text: string;
  created_at: string;
}

export type AnnotationInput = Pick<Annotation, "date" | "text">;

export const annotations = {
  list: (siteId: number) =>
    request<{ annotations: Annotation[] }>("GET", `/api/sites/${siteId}/annotations`).then((r) => r.annotations),
  create: (siteId: number, note: AnnotationInput) => request<Annotation>("POST", `/api/sites/${siteId}/annotations`, note),
  update: (id: number, note: Partial<AnnotationInput>) => request<Annotation>("PATCH", `/api/annotations/${id}`, note),
  remove: (id: number) => request<void>("DELETE", `/api/annotations/${id}`),
};
