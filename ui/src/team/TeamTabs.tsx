// Links between the team's pages: members and invitations, API keys.
export function TeamTabs({ current }: { current: "members" | "keys" }) {
  return (
    <nav class="team-tabs" aria-label="Team">
      <a href="/team" aria-current={current === "members" ? "page" : undefined}>
        Members and invitations
      </a>
      <a href="/team/keys" aria-current={current === "keys" ? "page" : undefined}>
        API keys
      </a>
    </nav>
  );
}
