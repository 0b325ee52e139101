import type { Survey, SurveyStatus } from "./api";

const STYLE: Record<SurveyStatus, string> = { published: "connected", draft: "pending", archived: "disabled" };
const LABEL: Record<SurveyStatus, string> = { published: "Published", draft: "Draft", archived: "Archived" };

/** A survey's status as a word plus a shape and colour, like the other badges. */
export function StatusBadge({ status }: { status: SurveyStatus }) {
  return (
    <span class={`badge badge-${STYLE[status]}`} data-status={status}>
      <span class="badge-dot" aria-hidden="true" />
      {LABEL[status]}
    </span>
  );
}

/** "Revision 2 live · draft 3 pending", in words. */
export function revisionText(survey: Survey): string {
  const parts: string[] = [];
  if (survey.revision === null) parts.push("Never published");
  else if (survey.status === "archived") parts.push(`Revision ${survey.revision} (archived)`);
  else parts.push(`Revision ${survey.revision} live`);
  if (survey.draft_revision !== null) parts.push(`draft ${survey.draft_revision} pending`);
  return parts.join(" · ");
}
