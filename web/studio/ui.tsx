/**
 * Small pieces every studio page uses: a modal dialog, a form's error line,
 * and the formats of sizes, durations and times.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Answer } from './api.ts';

/**
 * A modal dialog on the native <dialog>: showModal() gives the focus trap,
 * Escape to close and the inert page behind it, with the browser's own
 * accessibility (role dialog, named by its heading).
 */
export function Dialog({ title, open, onClose, children }: { title: string; open: boolean; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  const headingId = `dialog-${title.replace(/\W+/g, '-').toLowerCase()}`;
  return (
    <dialog ref={ref} aria-labelledby={headingId} onClose={onClose} class="dialog">
      <div class="dialog-head">
        <h2 id={headingId}>{title}</h2>
        <button type="button" class="icon secondary" aria-label="Close" onClick={onClose}>
          ×
        </button>
      </div>
      {open ? children : null}
    </dialog>
  );
}

/**
 * Asks before deleting something: its consequences, then Delete (off while it works) and Cancel. A refusal shows in
 * the dialog; `onClose(true)` once `remove` succeeded, `onClose(false)` on Cancel or Escape.
 */
export function ConfirmDelete({
  title,
  open,
  errorId,
  remove,
  onClose,
  children,
}: { title: string; open: boolean; errorId: string; remove: () => Promise<Answer<unknown>>; onClose: (deleted: boolean) => void; children: ComponentChildren }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const confirm = async () => {
    setBusy(true);
    const done = await remove();
    setBusy(false);
    if (!done.ok) return setError(done.refusal.detail);
    setError(undefined);
    onClose(true);
  };
  return (
    <Dialog title={title} open={open} onClose={() => onClose(false)}>
      {children}
      <FormError id={errorId} message={error} />
      <div class="actions">
        <button type="button" class="danger" disabled={busy} onClick={confirm}>
          Delete
        </button>
        <button type="button" class="secondary" onClick={() => onClose(false)}>
          Cancel
        </button>
      </div>
    </Dialog>
  );
}

/** A form's message: the room of one line is kept, so nothing moves when it shows. */
export function FormError({ id, message }: { id: string; message?: string }) {
  return (
    <p class="form-error" id={id} role="alert">
      {message ?? ''}
    </p>
  );
}

/**
 * The end of a form: its error, its submit button (off while it works) and, in a dialog, Cancel. A form of a page, which
 * stays where it is, also says what it did (a status); a dialog's closes instead.
 */
export function FormEnd({ errorId, error, done, busy, label, onCancel }: { errorId: string; error?: string; done?: string; busy: boolean; label: string; onCancel?: () => void }) {
  return (
    <>
      <FormError id={errorId} message={error} />
      {onCancel ? null : (
        <p class="form-done" role="status">
          {done}
        </p>
      )}
      <div class="actions">
        <button type="submit" disabled={busy}>
          {label}
        </button>
        {onCancel ? (
          <button type="button" class="secondary" onClick={onCancel}>
            Cancel
          </button>
        ) : null}
      </div>
    </>
  );
}

const SIZE_UNITS = ['bytes', 'KB', 'MB', 'GB', 'TB'];

/** Bytes in decimal units, as disks and browsers count them: 1.5 MB, 340 KB. */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} ${bytes === 1 ? 'byte' : 'bytes'}`;
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < SIZE_UNITS.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${value >= 100 ? Math.round(value) : value.toFixed(1)} ${SIZE_UNITS[unit]}`;
}

/** Seconds as m:ss (or h:mm:ss), as a player shows a track's length. */
export function formatDuration(seconds: number): string {
  const whole = Math.max(0, Math.round(seconds));
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = String(whole % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** A moment (milliseconds since the epoch) in the reader's own locale and zone. */
export function formatTime(ms: number): string {
  return dateFormat.format(new Date(ms));
}
