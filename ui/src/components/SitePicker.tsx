// Choosing which of the owner's sites a section shows (recordings, surveys): the choice is the
// page's `?site=` parameter, so it survives a reload, can be linked to and goes back with the
// browser's back button.
import { useLocation } from "preact-iso/router";

import { api, type Site } from "../api";
import { type Resource, useResource } from "../hooks";

export interface SiteChoice {
  /** The owner's sites, loading or loaded. */
  sites: Resource<Site[]>;
  /** The site named by `?site=`, else the first one; undefined while loading or without sites. */
  site: Site | undefined;
}

/** Loads the owner's sites and picks the one the page's `?site=` names (the first otherwise). */
export function useSiteChoice(): SiteChoice {
  const { query } = useLocation();
  const sites = useResource(api.sites);
  const wanted = Number.parseInt(query.site ?? "", 10);
  const list = sites.data ?? [];
  return { sites, site: list.find((s) => s.id === wanted) ?? list[0] };
}

interface SitePickerProps {
  sites: Site[];
  current: Site;
  /** The page's path; choosing a site opens `${path}?site=<id>`. */
  path: string;
}

/** A labelled "Site" select; choosing a site (mouse or keyboard) opens the page for it. */
export function SitePicker({ sites, current, path }: SitePickerProps) {
  const { route } = useLocation();
  return (
    <div class="site-picker">
      <label for="site-picker">Site</label>
      <select
        id="site-picker"
        value={current.id}
        onChange={(e) => route(`${path}?site=${encodeURIComponent((e.target as HTMLSelectElement).value)}`)}
      >
        {sites.map((s) => (
          <option key={s.id} value={s.id}>
            {s.name} ({s.domain})
          </option>
        ))}
      </select>
    </div>
  );
}
