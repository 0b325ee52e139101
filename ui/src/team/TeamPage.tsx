// The team (owner and admins): members with their roles, pending invitations, inviting someone.
import { useState } from "preact/hooks";

import { ApiError, api, messageOf, type Site } from "../api";
import { formMessage } from "../formMessages";
import { CopyButton } from "../components/CopyButton";
import { Breakable } from "../components/Breakable";
import { Dialog } from "../components/Dialog";
import { Field } from "../components/Field";
import { Notice } from "../components/Notice";
import { Page } from "../components/Page";
import { dateTime, timeAgo } from "../format";
import { useResource } from "../hooks";
import { team, type Invitation, type Member } from "./api";
import { TeamTabs } from "./TeamTabs";

const ROLE_TEXT = {
  owner: "Owner",
  admin: "Admin: everything except removing the owner",
  viewer: "Viewer: reads reports, recordings and survey results; changes nothing",
};

export function TeamPage() {
  const members = useResource(team.members);
  const invitations = useResource(team.invitations);
  const sites = useResource(api.sites);
  const [inviting, setInviting] = useState(false);
  const [created, setCreated] = useState<Invitation | null>(null);
  const [message, setMessage] = useState<{ kind: "error" | "success"; text: string } | null>(null);
  const [removing, setRemoving] = useState<Member | null>(null);

  const siteNames = (ids: number[] | null) => {
    if (ids === null) return "Every site";
    const names = ids.map((id) => sites.data?.find((s) => s.id === id)?.name ?? `Site ${id}`);
    return names.length ? names.join(", ") : "No sites";
  };

  const withdraw = async (invitation: Invitation) => {
    setMessage(null);
    try {
      await team.withdraw(invitation.id);
      setMessage({ kind: "success", text: `The invitation of ${invitation.email} was withdrawn; its link no longer works.` });
      await invitations.reload();
    } catch (failure) {
      setMessage({ kind: "error", text: messageOf(failure) });
    }
  };

  const changeRole = async (member: Member, role: string) => {
    setMessage(null);
    try {
      await team.updateMember(member.id, { role });
      setMessage({ kind: "success", text: `${member.email} is now ${role === "admin" ? "an admin" : "a viewer"}.` });
      await members.reload();
    } catch (failure) {
      setMessage({ kind: "error", text: `The role of ${member.email} did not change. ${formMessage("member", failure)}` });
      void members.reload(); // the menu shows the role the member still has
    }
  };

  return (
    <Page
      title="Team"
      subtitle="People who may use this console, and their roles."
      actions={
        <button type="button" class="button button-primary" onClick={() => { setCreated(null); setInviting(true); }}>
          <span class="icon icon-plus" aria-hidden="true" />
          Invite someone
        </button>
      }
    >
      <TeamTabs current="members" />
      {message && <Notice kind={message.kind}>{message.text}</Notice>}
      <section class="panel" aria-labelledby="members-title">
        <h2 id="members-title">Members</h2>
        {members.error && <Notice kind="error">{members.error}</Notice>}
        {members.loading && !members.data && <p class="loading">Loading members…</p>}
        {members.data && (
          <div class="table-scroll" tabIndex={0} role="region" aria-label="Members">
            <table class="team-table card-table">
              <thead>
                <tr>
                  <th scope="col">E-mail address</th>
                  <th scope="col">Role</th>
                  <th scope="col">Sites</th>
                  <th scope="col">Last active</th>
                  <th scope="col"><span class="visually-hidden">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                {members.data.map((member) => (
                  <tr key={member.id} data-member={member.email}>
                    <th scope="row"><Breakable text={member.email} /></th>
                    <td data-label="Role">
                      {member.role === "owner" ? (
                        "Owner"
                      ) : (
                        <select
                          aria-label={`Role of ${member.email}`}
                          value={member.role}
                          onChange={(e) => changeRole(member, (e.target as HTMLSelectElement).value)}
                        >
                          <option value="admin">Admin</option>
                          <option value="viewer">Viewer</option>
                        </select>
                      )}
                    </td>
                    <td data-label="Sites">{member.role === "viewer" ? siteNames(member.site_ids) : "Every site"}</td>
                    <td data-label="Last active">
                      {member.last_seen_at ? (
                        <time dateTime={member.last_seen_at} title={dateTime(member.last_seen_at)}>
                          {timeAgo(member.last_seen_at)}
                        </time>
                      ) : (
                        "Not signed in"
                      )}
                    </td>
                    <td class="actions">
                      {member.role !== "owner" && (
                        <button type="button" class="button button-quiet" onClick={() => setRemoving(member)}>
                          Remove<span class="visually-hidden"> {member.email}</span>
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <section class="panel" aria-labelledby="invitations-title">
        <h2 id="invitations-title">Pending invitations</h2>
        {invitations.error && <Notice kind="error">{invitations.error}</Notice>}
        {invitations.data && invitations.data.length === 0 && <p class="muted">No invitation is waiting to be accepted.</p>}
        {invitations.data && invitations.data.length > 0 && (
          <div class="table-scroll" tabIndex={0} role="region" aria-label="Pending invitations">
            <table class="team-table card-table">
              <thead>
                <tr>
                  <th scope="col">E-mail address</th>
                  <th scope="col">Role</th>
                  <th scope="col">Sites</th>
                  <th scope="col">Link valid until</th>
                  <th scope="col"><span class="visually-hidden">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                {invitations.data.map((invitation) => (
                  <tr key={invitation.id} data-invitation={invitation.email}>
                    <th scope="row"><Breakable text={invitation.email} /></th>
                    <td data-label="Role">{invitation.role === "admin" ? "Admin" : "Viewer"}</td>
                    <td data-label="Sites">{invitation.role === "viewer" ? siteNames(invitation.site_ids) : "Every site"}</td>
                    <td data-label="Link valid until">{dateTime(invitation.expires_at)}</td>
                    <td class="actions">
                      <button type="button" class="button button-quiet" onClick={() => withdraw(invitation)}>
                        Withdraw<span class="visually-hidden"> the invitation of {invitation.email}</span>
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <Dialog open={inviting} title={created ? "Send this link" : "Invite someone"} onClose={() => setInviting(false)}>
        {created ? (
          <InvitationLink invitation={created} onDone={() => setInviting(false)} />
        ) : (
          <InviteForm
            sites={sites.data ?? []}
            onCancel={() => setInviting(false)}
            onCreated={(invitation) => {
              setCreated(invitation);
              void invitations.reload();
            }}
          />
        )}
      </Dialog>
      <Dialog open={removing !== null} title="Remove this member?" onClose={() => setRemoving(null)}>
        {removing && (
          <RemoveMember
            member={removing}
            onCancel={() => setRemoving(null)}
            onRemoved={() => {
              setMessage({ kind: "success", text: `${removing.email} was removed and signed out.` });
              setRemoving(null);
              void members.reload();
            }}
          />
        )}
      </Dialog>
    </Page>
  );
}

function InviteForm({
  sites,
  onCancel,
  onCreated,
}: {
  sites: Site[];
  onCancel: () => void;
  onCreated: (invitation: Invitation) => void;
}) {
  const [role, setRole] = useState<"admin" | "viewer">("viewer");
  const [everySite, setEverySite] = useState(true);
  const [chosen, setChosen] = useState<number[]>([]);
  const [busy, setBusy] = useState(false);
  const [errors, setErrors] = useState<{ email?: string; site_ids?: string; form?: string }>({});

  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const email = (form.elements.namedItem("email") as HTMLInputElement).value.trim();
    if (!email) {
      setErrors({ email: "Enter the e-mail address of the person to invite." });
      form.querySelector<HTMLInputElement>("#invite-email")?.focus();
      return;
    }
    if (role === "viewer" && !everySite && chosen.length === 0) {
      setErrors({ site_ids: "Choose at least one site, or give every site." });
      return;
    }
    setBusy(true);
    setErrors({});
    try {
      onCreated(await team.invite(email, role, role === "viewer" && !everySite ? chosen : null));
    } catch (failure) {
      setBusy(false);
      if (failure instanceof ApiError && (failure.field === "email" || failure.field === "site_ids")) {
        setErrors({ [failure.field]: formMessage("invitation", failure) });
      } else {
        setErrors({ form: formMessage("invitation", failure) });
      }
    }
  };

  return (
    <form class="dialog-body" onSubmit={submit} noValidate>
      <Field
        id="invite-email"
        name="email"
        label="E-mail address"
        type="email"
        autoFocus
        required
        maxLength={320}
        spellcheck={false}
        autocapitalize="none"
        error={errors.email}
      />
      <fieldset class="choice-group">
        <legend>Role</legend>
        {(["viewer", "admin"] as const).map((value) => (
          <label key={value} class="choice">
            <input type="radio" name="role" value={value} checked={role === value} onChange={() => setRole(value)} />
            {ROLE_TEXT[value]}
          </label>
        ))}
      </fieldset>
      {role === "viewer" && (
        <fieldset class="choice-group" aria-describedby={errors.site_ids ? "invite-sites-error" : undefined}>
          <legend>Sites the viewer may read</legend>
          <label class="choice">
            <input type="checkbox" checked={everySite} onChange={() => setEverySite(!everySite)} />
            Every site, including sites added later
          </label>
          {!everySite &&
            sites.map((site) => (
              <label key={site.id} class="choice">
                <input
                  type="checkbox"
                  checked={chosen.includes(site.id)}
                  onChange={() =>
                    setChosen(chosen.includes(site.id) ? chosen.filter((id) => id !== site.id) : [...chosen, site.id])
                  }
                />
                {site.name} <span class="muted">({site.domain})</span>
              </label>
            ))}
          {errors.site_ids && (
            <p class="field-error" id="invite-sites-error">
              {errors.site_ids}
            </p>
          )}
        </fieldset>
      )}
      {errors.form && <Notice kind="error">{errors.form}</Notice>}
      <div class="dialog-actions">
        <button type="button" class="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" class="button button-primary" disabled={busy}>
          {busy ? "Creating the link…" : "Create invitation link"}
        </button>
      </div>
    </form>
  );
}

function InvitationLink({ invitation, onDone }: { invitation: Invitation; onDone: () => void }) {
  const url = invitation.url ?? "";
  return (
    <div class="dialog-body">
      <Notice kind="success">
        {invitation.email_sent ? `The link was e-mailed to ${invitation.email}; you can also copy it here.` : `Send this link to ${invitation.email}.`}{" "}
        It works once, until {dateTime(invitation.expires_at)}, and is shown only now.
      </Notice>
      <pre class="snippet"><code id="invitation-url">{url}</code></pre>
      <CopyButton text={url} label="Copy link" target={() => document.getElementById("invitation-url")} />
      <div class="dialog-actions">
        <button type="button" class="button button-primary" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}

function counted(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** What removing the member ends besides their account: everything they made that grants access. */
function endsWith(member: Member): string {
  const made = member.grants ?? { invitations: 0, api_keys: 0, shares: 0 };
  const parts = [
    made.invitations ? counted(made.invitations, "pending invitation", "pending invitations") : "",
    made.api_keys ? counted(made.api_keys, "API key", "API keys") : "",
    made.shares ? counted(made.shares, "shared link", "shared links") : "",
  ].filter(Boolean);
  if (parts.length === 0) {
    return "They made no invitations, API keys or shared links that are still in use.";
  }
  const list = parts.length > 1 ? `${parts.slice(0, -1).join(", ")} and ${parts[parts.length - 1]}` : parts[0];
  return `What they made ends with them: ${list} stop working. Make new ones yourself if they are still needed.`;
}

function RemoveMember({ member, onCancel, onRemoved }: { member: Member; onCancel: () => void; onRemoved: () => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const remove = async () => {
    setBusy(true);
    try {
      await team.removeMember(member.id);
      onRemoved();
    } catch (failure) {
      setBusy(false);
      setError(messageOf(failure));
    }
  };
  return (
    <div class="dialog-body">
      <p>
        {member.email} loses access at once: their account is deleted and any open session ends. You can invite them
        again later.
      </p>
      <p>{endsWith(member)}</p>
      {error && <Notice kind="error">{error}</Notice>}
      <div class="dialog-actions">
        <button type="button" class="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="button" class="button button-danger" onClick={remove} disabled={busy}>
          {busy ? "Removing…" : "Remove member"}
        </button>
      </div>
    </div>
  );
}
