// The sections of a site's settings page (/sites/:id/settings), in the order they are shown.
// A feature adds its settings as one more entry here (geography and privacy, sharing,
// autocapture, goals): a component that receives the site and reports the changed site back.
// Large sections may load lazily: `component: lazy(() => import("./Goals").then((m) => m.Goals))`.
import type { ComponentType } from "preact";

import type { Site } from "../api";
import { AutocapturePanel } from "./AutocapturePanel";
import { CollectionPanel } from "./CollectionPanel";
import { DeletePanel } from "./DeletePanel";
import { GoalsPanel } from "./GoalsPanel";
import { NamePanel } from "./NamePanel";
import { PrivacyPanel } from "./PrivacyPanel";
import { ReferrersPanel } from "./ReferrersPanel";
import { TimeZonePanel } from "./TimeZonePanel";
import { ImportsPanel } from "../imports/ImportsPanel";
import { EmailSection } from "../team/EmailSection";
import { SharingSection } from "../team/SharingSection";
import { VisitorsPanel } from "./VisitorsPanel";

export interface SettingsProps {
  site: Site;
  /** Call with the API's answer after a change, so every section shows the site as stored. */
  onChange: (site: Site) => void;
}

export interface SettingsSection {
  /** Stable id: the in-page anchor (`/sites/1/settings#collection`) and the table of contents. */
  id: string;
  /** The entry in the page's table of contents (the section's own heading may say more). */
  label: string;
  component: ComponentType<SettingsProps>;
  /** For a viewer: "hide" (the section is for those who may change it), "open" (a viewer may use
   * it: their own e-mails); otherwise shown read-only. */
  viewer?: "hide" | "open";
}

export const settingsSections: SettingsSection[] = [
  { id: "details", label: "Name and domain", component: NamePanel },
  { id: "time-zone", label: "Time zone", component: TimeZonePanel },
  { id: "collection", label: "Collection and recording", component: CollectionPanel },
  { id: "sharing", label: "Sharing", component: SharingSection, viewer: "hide" },
  { id: "email", label: "E-mail reports", component: EmailSection, viewer: "open" },
  { id: "autocapture", label: "Autocapture", component: AutocapturePanel },
  { id: "privacy", label: "Privacy and retention", component: PrivacyPanel },
  { id: "referrers", label: "Referrer spam", component: ReferrersPanel },
  { id: "visitors", label: "A visitor's data", component: VisitorsPanel, viewer: "hide" },
  { id: "goals", label: "Goals", component: GoalsPanel },
  { id: "imports", label: "Imports", component: ImportsPanel },
  // Sections of other features go above this line; deleting the site stays last.
  { id: "delete", label: "Delete site", component: DeletePanel, viewer: "hide" },
];
