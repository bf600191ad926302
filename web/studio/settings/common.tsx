/**
 * What the settings' tabs share: a value loaded from the API (with its
 * refusal, and a way to load it again), a button that runs one call at a
 * time and says why it was refused, and the names of devices and sign-in
 * methods the Security tab shows.
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { Answer } from '../api.ts';
import { firstInvalid } from '../../account/forms.ts';

export interface Loaded<T> {
  /** The data, or undefined until the first answer (and after a refusal). */
  data: T | undefined;
  error: string | undefined;
  reload: () => Promise<void>;
}

/** A value read through the API when the component mounts, and again on `reload()`. */
export function useLoaded<T>(load: () => Promise<Answer<T>>): Loaded<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<string>();
  // The loader is read when called: once on mount, then on each reload().
  const reload = useCallback(async () => {
    const answer = await load();
    if (answer.ok) {
      setData(answer.data);
      setError(undefined);
    } else setError(answer.refusal.detail);
  }, []);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { data, error, reload };
}

/**
 * The form's first field that does not hold what it must, said as the
 * account pages say it (web/account/forms.ts), marked aria-invalid and
 * focused; undefined when every field does.
 */
export function checkForm(form: HTMLFormElement): string | undefined {
  for (const input of form.querySelectorAll('input')) input.removeAttribute('aria-invalid');
  const invalid = firstInvalid(form);
  if (!invalid) return undefined;
  invalid.input.setAttribute('aria-invalid', 'true');
  invalid.input.focus();
  return invalid.message;
}

/** A small secondary button that runs `action` once at a time; a refusal goes to `onRefused`. */
export function ActionButton({
  children,
  action,
  onRefused,
  onDone,
  describedBy,
  class: className = 'secondary small',
  disabled = false,
}: {
  children: string;
  action: () => Promise<Answer<unknown>>;
  onRefused: (detail: string | undefined) => void;
  onDone?: () => void | Promise<void>;
  describedBy?: string;
  class?: string;
  disabled?: boolean;
}) {
  const [busy, setBusy] = useState(false);
  const click = async () => {
    setBusy(true);
    onRefused(undefined);
    const answer = await action();
    setBusy(false);
    if (!answer.ok) return onRefused(answer.refusal.detail);
    await onDone?.();
  };
  return (
    <button type="button" class={className} aria-describedby={describedBy} disabled={busy || disabled} onClick={click}>
      {children}
    </button>
  );
}

/** "Firefox on Linux" from a User-Agent string, to tell sessions apart at a glance; the whole string is in the title. */
export function device(userAgent: string | null | undefined): string {
  if (!userAgent) return 'Unknown device';
  const browser = /Edg\//.test(userAgent)
    ? 'Edge'
    : /Firefox\//.test(userAgent)
      ? 'Firefox'
      : /Chrom(e|ium)\//.test(userAgent)
        ? 'Chrome'
        : /Safari\//.test(userAgent)
          ? 'Safari'
          : /curl|node|undici/i.test(userAgent)
            ? 'A program'
            : 'A browser';
  const system = /Android/.test(userAgent)
    ? 'Android'
    : /iPhone|iPad/.test(userAgent)
      ? 'iOS'
      : /Windows/.test(userAgent)
        ? 'Windows'
        : /Mac OS X|Macintosh/.test(userAgent)
          ? 'macOS'
          : /Linux|X11/.test(userAgent)
            ? 'Linux'
            : '';
  return system ? `${browser} on ${system}` : browser;
}

const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

/** A day as the reader's locale writes it. */
export const formatDate = (ms: number) => dateOnly.format(new Date(ms));

/** A list's place while it loads, or its refusal. */
export function ListState({ error, loading }: { error?: string; loading: boolean }) {
  if (error) return <li class="form-error">{error}</li>;
  if (loading) return <li class="meta">Loading…</li>;
  return null;
}

/** A heading that takes the focus once, when it appears (a secret shown once, a result to read first). */
export function FocusedHeading({ id, children }: { id: string; children: string }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => ref.current?.focus(), []);
  return (
    <h3 id={id} tabIndex={-1} ref={ref}>
      {children}
    </h3>
  );
}
