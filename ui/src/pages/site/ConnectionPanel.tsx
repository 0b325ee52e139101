import { useState } from "preact/hooks";

import { ApiError, api, messageOf, type Site } from "../../api";
import { Badge } from "../../components/Badge";
import { Notice } from "../../components/Notice";
import { checkErrorText, stateSummary } from "../../connection";
import { dateTime, timeAgo, wait } from "../../format";
import { useCountdown, useTicker } from "../../hooks";
import { useCanChange } from "../../user";

/** A check's result; `waiting` adds the live countdown the button shows, so both say the same. */
type Outcome = { kind: "success" | "error"; text: string; waiting?: boolean } | null;

function When({ iso, none }: { iso: string | null; none: string }) {
  if (!iso) return <>{none}</>;
  return (
    <time dateTime={iso} title={dateTime(iso)}>
      {timeAgo(iso)}
    </time>
  );
}

/** The connection state, its times, and "Check connection" with its result. */
export function ConnectionPanel({ site, onChange }: { site: Site; onChange: (site: Site) => void }) {
  const canChange = useCanChange();
  const { connection } = site;
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome>(null);
  const [left, startWait] = useCountdown();
  useTicker(15_000);

  const retry = async () => {
    setBusy(true);
    setOutcome(null);
    try {
      const checked = await api.retrySite(site.id);
      onChange(checked);
      const error = checked.connection.last_check_error;
      setOutcome(
        error && checked.connection.state === "connected"
          ? {
              kind: "error",
              text: `The check failed, but events from this site keep arriving, so it stays connected. ${checkErrorText(error, checked.domain)}`,
            }
          : error
          ? { kind: "error", text: `The check failed. ${checkErrorText(error, checked.domain)}` }
          : {
              kind: "success",
              text: `The snippet with this site's key is on the home page of ${checked.domain}.`,
            },
      );
    } catch (failure) {
      if (failure instanceof ApiError && failure.status === 429 && failure.retryAfter) {
        startWait(failure.retryAfter);
        setOutcome({ kind: "error", text: failure.message, waiting: true });
      } else {
        setOutcome({ kind: "error", text: messageOf(failure) });
      }
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="panel" aria-labelledby="connection-title">
      <div class="panel-head">
        <h2 id="connection-title">Connection</h2>
        <Badge state={connection.state} large />
      </div>
      <p class="state-summary">{stateSummary(site)}</p>
      {connection.last_check_error && connection.state === "error" && !outcome && (
        <p class="site-error">
          <span class="icon icon-warning" aria-hidden="true" />
          {checkErrorText(connection.last_check_error, site.domain)}
        </p>
      )}
      {connection.last_check_error && connection.state === "connected" && !outcome && (
        <p class="field-hint">
          The last connection check failed, but events keep arriving, so the site counts as connected:{" "}
          {checkErrorText(connection.last_check_error, site.domain)}
        </p>
      )}
      <dl class="facts">
        <div>
          <dt>Last event</dt>
          <dd>
            <When iso={connection.last_event_at} none="None yet" />
          </dd>
        </div>
        <div>
          <dt>First event</dt>
          <dd>
            <When iso={connection.first_event_at} none="None yet" />
          </dd>
        </div>
        <div>
          <dt>Last check</dt>
          <dd>
            <When iso={connection.last_check_at} none="Not checked yet" />
            {connection.last_check_at && (connection.last_check_error ? ", failed" : ", snippet found")}
          </dd>
        </div>
      </dl>
      {canChange && (
      <div class="panel-actions">
        <button type="button" class="button" onClick={retry} disabled={busy || left > 0}>
          <span class="icon icon-refresh" aria-hidden="true" />
          {busy ? "Checking…" : left > 0 ? `Check again in ${left} s` : "Check connection"}
        </button>
        <span class="field-hint">Loads the home page of {site.domain} and looks for the snippet.</span>
      </div>
      )}
      {outcome && (
        <Notice kind={outcome.kind}>
          {outcome.text}
          {outcome.waiting && left > 0 && ` Wait ${wait(left)}.`}
        </Notice>
      )}
    </section>
  );
}
