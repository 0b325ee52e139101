import type { ComponentChildren } from "preact";
import { useEffect, useId, useRef } from "preact/hooks";

interface DialogProps {
  open: boolean;
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  /** A wide dialog (tables); the default fits a short form. */
  wide?: boolean;
}

/**
 * A modal dialog (the native <dialog>: focus is trapped and Escape closes it). Focus goes back
 * to the control that opened it when it closes, unless that control has gone.
 */
export function Dialog({ open, title, onClose, children, wide }: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const opener = useRef<HTMLElement | null>(null);

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) {
      opener.current = document.activeElement as HTMLElement | null;
      dialog.showModal();
    } else if (!open && dialog.open) {
      dialog.close();
    }
  }, [open]);

  useEffect(
    () => () => {
      if (ref.current?.open) ref.current.close();
    },
    [],
  );

  const closed = () => {
    const back = opener.current;
    opener.current = null;
    if (back?.isConnected) back.focus();
    if (open) onClose();
  };

  return (
    <dialog ref={ref} class={wide ? "dialog dialog-wide" : "dialog"} aria-labelledby={titleId} onClose={closed}>
      <div class="dialog-head">
        <h2 id={titleId}>{title}</h2>
        <button type="button" class="icon-button" aria-label="Close" onClick={() => ref.current?.close()}>
          <span aria-hidden="true">×</span>
        </button>
      </div>
      {open && children}
    </dialog>
  );
}
