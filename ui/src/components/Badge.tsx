import type { ConnectionState, ServiceStatus } from "../api";

const LABELS: Record<ConnectionState | ServiceStatus, string> = {
  pending: "Pending",
  connected: "Connected",
  error: "Error",
  disabled: "Disabled",
  ok: "OK",
  degraded: "Degraded",
  down: "Down",
};

/** A state as a word plus a shape and colour, never colour alone. */
export function Badge({ state, large }: { state: ConnectionState | ServiceStatus; large?: boolean }) {
  return (
    <span class={`badge badge-${state}${large ? " badge-large" : ""}`} data-state={state}>
      <span class="badge-dot" aria-hidden="true" />
      {LABELS[state] ?? state}
    </span>
  );
}
