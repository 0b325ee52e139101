import type { ComponentChildren } from "preact";

/** An error (announced at once) or a confirmation (announced politely) shown where it happened. */
export function Notice({ kind, children, id }: { kind: "error" | "success" | "info"; children: ComponentChildren; id?: string }) {
  return (
    <div id={id} class={`notice notice-${kind}`} role={kind === "error" ? "alert" : "status"}>
      <span class="notice-icon" aria-hidden="true" />
      <div>{children}</div>
    </div>
  );
}
