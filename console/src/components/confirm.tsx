import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';

/**
 * A modal confirmation on the native <dialog>: it traps the focus, Escape cancels, and the focus
 * starts on "Cancel", so a stray Enter never confirms a rotation or a deletion.
 */
export function ConfirmDialog({
  title,
  children,
  confirm,
  danger = false,
  busy = false,
  onConfirm,
  onCancel,
}: {
  title: string;
  children: ComponentChildren;
  confirm: string;
  danger?: boolean;
  busy?: boolean;
  onConfirm(): void;
  onCancel(): void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  const id = useId();
  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    element.showModal();
    cancel.current?.focus();
    return () => element.close();
  }, []);
  return (
    <dialog
      ref={dialog}
      class="dialog"
      aria-labelledby={`${id}-title`}
      aria-describedby={`${id}-body`}
      onCancel={(event) => (event.preventDefault(), onCancel())}
    >
      <h2 id={`${id}-title`}>{title}</h2>
      <div id={`${id}-body`} class="dialog-body">
        {children}
      </div>
      <div class="row end">
        <button type="button" class="secondary" ref={cancel} onClick={onCancel}>
          Cancel
        </button>
        <button type="button" class={danger ? 'danger' : ''} disabled={busy} onClick={onConfirm}>
          {confirm}
        </button>
      </div>
    </dialog>
  );
}
