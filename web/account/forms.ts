/**
 * What every form of the account pages does alike: check the fields before
 * sending (the form is `novalidate`, so the messages are ours, in the
 * form's alert, not the browser's bubbles), keep its buttons disabled while
 * the request runs, and on a refusal show the problem's detail in the
 * form's alert (role="alert"), keeping what was typed except passwords.
 */
import type { Answer, Refusal } from './api.ts';

/** The text of the label of a field, for the messages that name it. */
function labelOf(input: HTMLInputElement): string {
  return input.labels?.[0]?.textContent?.trim() || input.getAttribute('aria-label') || input.name;
}

/** The first field that does not hold what it must, with what to do about it; undefined when all do. */
export function firstInvalid(form: HTMLFormElement): { input: HTMLInputElement; message: string } | undefined {
  for (const input of form.querySelectorAll<HTMLInputElement>('input:not([type="hidden"]):not([hidden])')) {
    const { validity } = input;
    if (validity.valid) continue;
    const label = labelOf(input).replace(/ \(optional\)$/, '');
    let message = `${label}: ${input.validationMessage}`;
    if (validity.valueMissing) message = `Type your ${label.toLowerCase()}.`;
    else if (validity.typeMismatch && input.type === 'email') message = 'That email address does not look right.';
    else if (validity.tooShort) message = `${label} needs at least ${input.minLength} characters (it has ${input.value.length}).`;
    else if (validity.rangeUnderflow) message = `${label} must be later than today.`;
    return { input, message };
  }
  return undefined;
}

export function setBusy(form: HTMLElement, busy: boolean): void {
  for (const button of form.querySelectorAll('button')) button.disabled = busy;
  form.setAttribute('aria-busy', String(busy));
}

export function showError(alert: HTMLElement, refusal: Refusal | string | undefined): void {
  alert.textContent = typeof refusal === 'string' ? refusal : (refusal?.detail ?? '');
}

/**
 * Wires a form: on submit, checks it, then runs `send` with its buttons
 * disabled. `send` answers the API's answer; on a refusal the detail shows
 * in `alert`, password fields are emptied and the first of them is focused
 * (a wrong password is typed again, and nothing secret stays on screen),
 * and `onDone` runs on success.
 */
export function wireForm<T>(form: HTMLFormElement, alert: HTMLElement, send: () => Promise<Answer<T>>, onDone: (data: T) => void | Promise<void>): void {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (form.getAttribute('aria-busy') === 'true') return;
    for (const input of form.querySelectorAll('input')) input.removeAttribute('aria-invalid');
    const invalid = firstInvalid(form);
    if (invalid) {
      showError(alert, invalid.message);
      invalid.input.setAttribute('aria-invalid', 'true');
      invalid.input.focus();
      return;
    }
    showError(alert, undefined);
    setBusy(form, true);
    let done = false;
    try {
      const result = await send();
      if (result.ok) {
        done = true;
        await onDone(result.data);
        return;
      }
      showError(alert, result.refusal);
      const passwords = [...form.querySelectorAll<HTMLInputElement>('input[type="password"]')];
      for (const input of passwords) input.value = '';
      passwords[0]?.focus();
    } finally {
      // A form that leads elsewhere (data-keep-busy) stays disabled until the page goes: no second submit meanwhile.
      setBusy(form, done && form.dataset.keepBusy === 'true');
    }
  });
}

/** The value of a named field of the form, trimmed unless it is a password. */
export function value(form: HTMLFormElement, name: string): string {
  const input = form.elements.namedItem(name) as HTMLInputElement | null;
  if (!input) return '';
  return input.type === 'password' ? input.value : input.value.trim();
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

/** A moment as this browser's locale writes it. */
export const formatTime = (ms: number) => dateTime.format(new Date(ms));
export const formatDate = (ms: number) => dateOnly.format(new Date(ms));

/** An element with a class and text (never markup: every value shown comes from the API or the person). */
export function element<K extends keyof HTMLElementTagNameMap>(tag: K, className = '', text = ''): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text) node.textContent = text;
  return node;
}
