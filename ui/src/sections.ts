// The console's sections: each one adds routes and, with a label, an entry in the main navigation.
// A new section (reports, recordings, surveys) is one more entry here, usually with
// `lazy(() => import("./pages/..."))` so that its code loads only when it is opened; the server
// must serve the application shell at its paths too (CONSOLE_PATHS in sightline/web/pages.py).
import type { ComponentType } from "preact";
import lazy from "preact-iso/lazy";
import { exec } from "preact-iso/router";

import { HealthPage } from "./pages/Health";
import { SitePage } from "./pages/Site";
import { OverviewPage } from "./pages/Overview";
import { SitesPage } from "./pages/Sites";

export interface Section {
  /** Label in the main navigation. */
  label: string;
  /** Where the navigation entry leads. */
  href: string;
  routes: { path: string; component: ComponentType<any> }[];
  /** Only the owner and admins see the entry (a viewer's calls there would be 403). */
  adminOnly?: boolean;
}

export const sections: Section[] = [
  {
    label: "Sites",
    href: "/sites",
    routes: [
      { path: "/sites", component: SitesPage },
      { path: "/overview", component: OverviewPage },
      { path: "/sites/:id", component: SitePage },
      {
        path: "/sites/:id/settings",
        component: lazy(() => import("./settings/SettingsPage").then((m) => m.SettingsPage)),
      },
    ],
  },
  {
    label: "Recordings",
    href: "/recordings",
    routes: [
      { path: "/recordings", component: lazy(() => import("./recordings/RecordingsPage").then((m) => m.RecordingsPage)) },
      { path: "/recordings/:id", component: lazy(() => import("./recordings/PlayerPage").then((m) => m.PlayerPage)) },
    ],
  },
  {
    label: "Reports",
    href: "/reports",
    routes: [
      { path: "/reports", component: lazy(() => import("./reports/ReportsPage").then((m) => m.ReportsIndex)) },
      { path: "/sites/:id/reports", component: lazy(() => import("./reports/ReportsPage").then((m) => m.ReportsPage)) },
      { path: "/sites/:id/realtime", component: lazy(() => import("./reports/RealtimePage").then((m) => m.RealtimePage)) },
      { path: "/sites/:id/heatmap", component: lazy(() => import("./reports/HeatmapPage").then((m) => m.HeatmapPage)) },
      {
        path: "/sites/:id/conversions",
        component: lazy(() => import("./conversions/ConversionsPage").then((m) => m.ConversionsPage)),
      },
    ],
  },
  {
    label: "Surveys",
    href: "/surveys",
    routes: [
      { path: "/surveys", component: lazy(() => import("./surveys/SurveysPage").then((m) => m.SurveysPage)) },
      { path: "/surveys/new", component: lazy(() => import("./surveys/EditorPage").then((m) => m.NewSurveyPage)) },
      { path: "/surveys/:id", component: lazy(() => import("./surveys/EditorPage").then((m) => m.SurveyPage)) },
      {
        path: "/surveys/:id/responses",
        component: lazy(() => import("./surveys/ResponsesPage").then((m) => m.ResponsesPage)),
      },
    ],
  },
  {
    label: "Team",
    href: "/team",
    adminOnly: true,
    routes: [
      { path: "/team", component: lazy(() => import("./team/TeamPage").then((m) => m.TeamPage)) },
      { path: "/team/keys", component: lazy(() => import("./team/KeysPage").then((m) => m.KeysPage)) },
    ],
  },
  { label: "Health", href: "/health", routes: [{ path: "/health", component: HealthPage }] },
];

/**
 * The section the page at `path` belongs to, which the navigation marks as current: the section
 * of the route the router shows there (the first route that matches, in the router's order), so
 * `/sites/12/reports` is a Reports page although it lies under `/sites`. A path no route matches
 * (the not-found page) belongs to the section whose `href` it lies under, if any.
 */
export function sectionOf(path: string): Section | undefined {
  return (
    sections.find((section) => section.routes.some((r) => exec(path, r.path) !== undefined)) ??
    sections.find((section) => path === section.href || path.startsWith(`${section.href}/`))
  );
}
