import { useEffect, useRef, useState } from "preact/hooks";

interface CopyProps {
  text: string;
  label: string;
  /** The element holding the text, selected for a manual copy when the clipboard is refused. */
  target: () => HTMLElement | null;
}

type Outcome = "idle" | "copied" | "manual";

/** Copies with the clipboard API, confirms visibly, and falls back to selecting the text. */
export function CopyButton({ text, label, target }: CopyProps) {
  const [outcome, setOutcome] = useState<Outcome>("idle");
  const timer = useRef(0);
  useEffect(() => () => window.clearTimeout(timer.current), []);

  const copy = async () => {
    window.clearTimeout(timer.current);
    try {
      if (!navigator.clipboard || !window.isSecureContext) throw new Error("no clipboard");
      await navigator.clipboard.writeText(text);
      setOutcome("copied");
      timer.current = window.setTimeout(() => setOutcome("idle"), 4000);
    } catch {
      const element = target();
      const selection = window.getSelection();
      if (element && selection) selection.selectAllChildren(element);
      setOutcome("manual");
    }
  };

  return (
    <div class="copy">
      <button type="button" class="button" onClick={copy}>
        <span class={outcome === "copied" ? "icon icon-check" : "icon icon-copy"} aria-hidden="true" />
        {outcome === "copied" ? "Copied" : label}
      </button>
      <p class="copy-status" role="status">
        {outcome === "copied" && "Copied to the clipboard."}
        {outcome === "manual" &&
          "The browser did not allow copying. The snippet is selected: press Ctrl+C (⌘C on a Mac) to copy it."}
      </p>
    </div>
  );
}
