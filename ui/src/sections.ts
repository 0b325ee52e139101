// The console's sections: each one adds routes and, with a label, an entry in the main navigation.
// A new section (reports, recordings, surveys) is one more entry here, usually with
// `lazy(() => import("./pages/..."))` so that its code loads only when it is opened; the server
// must serve the application shell at its paths too (CONSOLE_PATHS in sightline/web/pages.py).
import type { ComponentType } from "preact";
import lazy from "preact-iso/lazy";

import { HealthPage } from "./pages/Health";
import { SitePage } from "./pages/Site";
import { SitesPage } from "./pages/Sites";

export interface Section {
  /** Label in the main navigation. */
  label: string;
  /** Where the navigation entry leads; paths under it mark the entry as current. */
  href: string;
  routes: { path: string; component: ComponentType<any> }[];
}

export const sections: Section[] = [
  {
    label: "Sites",
    href: "/sites",
    routes: [
      { path: "/sites", component: SitesPage },
      { path: "/sites/:id", component: SitePage },
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
  { label: "Health", href: "/health", routes: [{ path: "/health", component: HealthPage }] },
];
