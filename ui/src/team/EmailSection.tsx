// The E-mail reports section of a site's settings: what the team receives, whether I receive it
// (every e-mail's unsubscribe link turns this off; here it turns on again), and a digest sent now.
import { useState } from "preact/hooks";

import { messageOf, request } from "../api";
import { Notice } from "../components/Notice";
import { Switch } from "../components/Switch";
import { useResource } from "../hooks";
import type { SettingsProps } from "../settings/registry";
import { useCanChange } from "../user";

interface Subscription {
  site_id: number;
  email: string;
  enabled: boolean;
}

export function EmailSection({ site }: SettingsProps) {
  const canChange = useCanChange();
  const [message, setMessage] = useState<{ kind: "error" | "success"; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const path = `/api/sites/${site.id}/email-reports/subscription`;
  const subscription = useResource(() => request<Subscription>("GET", path));
  const [saving, setSaving] = useState(false);
  const subscribe = async (enabled: boolean) => {
    setSaving(true);
    setMessage(null);
    try {
      await request<Subscription>("PUT", path, { enabled });
      await subscription.reload();
      setMessage({
        kind: "success",
        text: enabled ? `You receive e-mails about ${site.name} again.` : `You no longer receive e-mails about ${site.name}.`,
      });
    } catch (failure) {
      setMessage({ kind: "error", text: messageOf(failure) });
    }
    setSaving(false);
  };
  const send = async (kind: "weekly" | "monthly") => {
    setBusy(true);
    setMessage(null);
    try {
      const sent = await request<{ sent_to: string }>("POST", `/api/sites/${site.id}/email-reports/send`, { kind });
      setMessage({ kind: "success", text: `The ${kind} digest was sent to ${sent.sent_to}.` });
    } catch (failure) {
      setMessage({ kind: "error", text: messageOf(failure) });
    }
    setBusy(false);
  };
  return (
    <section class="panel" aria-labelledby="email-title">
      <h2 id="email-title">E-mail reports</h2>
      <p class="muted">
        With e-mail set up (<code>--smtp-url</code>), the team receives a digest of {site.name} every Monday (the week
        before) and on the 1st (the month before), and a notice when traffic spikes.
      </p>
      {message && <Notice kind={message.kind}>{message.text}</Notice>}
      {subscription.error && <Notice kind="error">{subscription.error}</Notice>}
      {subscription.data && (
        // Every member chooses their own e-mails, a viewer too.
        <div data-anyone>
        <Switch
          id="email-subscription"
          label={`Send me e-mails about ${site.name}`}
          description={`Digests and traffic notices, to ${subscription.data.email}. Each e-mail's unsubscribe link turns this off.`}
          checked={subscription.data.enabled}
          busy={saving}
          onChange={subscribe}
        />
        </div>
      )}
      {canChange && (
      <div class="share-actions">
        <button type="button" class="button" disabled={busy} onClick={() => send("weekly")}>
          Send me last week's digest
        </button>
        <button type="button" class="button" disabled={busy} onClick={() => send("monthly")}>
          Send me last month's digest
        </button>
      </div>
      )}
    </section>
  );
}
