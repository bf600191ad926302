/**
 * The upload portal's page (/u/{playerid}): the server renders the form
 * (server/pages/portal-shell.ts, the owner's header and greeting as text); this app
 * sends the chosen files with tus-js-client to the portal's tus endpoint,
 * each with its own progress bar, speed, cancel button and message. A
 * dropped connection is retried from the server's offset; a reload finds
 * an unfinished upload of the same file again (its fingerprint in
 * localStorage) and resumes it. When every file is in, the page goes to the
 * owner's redirect (http or https only, checked by the server) or thanks.
 */
import './portal.css';
import { Upload, type DetailedError } from 'tus-js-client';

const root = document.getElementById('portal')!;
const form = document.getElementById('portal-form') as HTMLFormElement;
const nameInput = document.getElementById('uploader-name') as HTMLInputElement;
const emailInput = document.getElementById('uploader-email') as HTMLInputElement;
const fileInput = document.getElementById('files') as HTMLInputElement;
const drop = document.getElementById('drop')!;
const list = document.getElementById('file-list')!;
const formError = document.getElementById('form-error')!;
const submit = document.getElementById('upload-button') as HTMLButtonElement;
const thanks = document.getElementById('thanks')!;
const endpoint = new URL(root.dataset.endpoint!, window.location.href).href;
const redirect = root.dataset.redirect;

/** Bytes per PATCH: a cut connection costs at most this much again, and a closed portal is noticed by the next one. */
const CHUNK_BYTES = 8 * 1024 * 1024;
/** Waits before each retry of a failed request (tus-js-client resumes from the server's offset). */
const RETRY_DELAYS = [0, 1000, 3000, 5000, 10_000, 20_000, 30_000, 60_000, 60_000, 60_000];
const AT_ONCE = 2;

type State = 'chosen' | 'queued' | 'uploading' | 'done' | 'failed' | 'cancelled';

interface Item {
  file: File;
  state: State;
  upload?: Upload;
  li: HTMLLIElement;
  progress: HTMLProgressElement;
  speed: HTMLElement;
  message: HTMLElement;
  button: HTMLButtonElement;
  lastBytes: number;
  lastTime: number;
  rate: number;
}

const items: Item[] = [];

function element<K extends keyof HTMLElementTagNameMap>(tag: K, className: string, text = ''): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  node.textContent = text;
  return node;
}

function formatBytes(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value.toFixed(value >= 100 || unit === 0 ? 0 : 1)} ${units[unit]}`;
}

function addFiles(files: Iterable<File>): void {
  for (const file of files) {
    if (items.some((item) => item.file.name === file.name && item.file.size === file.size && item.state !== 'cancelled')) continue;
    const li = element('li', 'file');
    const name = element('span', 'file-name', file.name);
    const size = element('span', 'file-size', formatBytes(file.size));
    const progress = element('progress', 'file-progress');
    progress.max = 100;
    progress.value = 0;
    // Named by the file, so that each bar says whose progress it shows.
    progress.setAttribute('aria-label', file.name);
    const speed = element('span', 'file-speed');
    const button = element('button', 'file-cancel', 'Remove');
    button.type = 'button';
    button.setAttribute('aria-label', `Remove ${file.name}`);
    const message = element('p', 'file-message');
    message.setAttribute('role', 'status');
    li.append(name, size, progress, speed, button, message);
    list.append(li);
    const item: Item = { file, state: 'chosen', li, progress, speed, message, button, lastBytes: 0, lastTime: 0, rate: 0 };
    button.addEventListener('click', () => cancel(item));
    items.push(item);
  }
  formError.textContent = '';
}

function setState(item: Item, state: State, message = ''): void {
  item.state = state;
  item.li.dataset.state = state;
  item.message.textContent = message;
  const label = state === 'chosen' ? 'Remove' : state === 'failed' ? 'Remove' : 'Cancel';
  item.button.textContent = label;
  item.button.setAttribute('aria-label', `${label} ${item.file.name}`);
  item.button.hidden = state === 'done' || state === 'cancelled';
  if (state === 'failed') item.message.setAttribute('role', 'alert');
}

function cancel(item: Item): void {
  if (item.state === 'uploading' || item.state === 'queued') {
    // terminate: the server drops the bytes so far and the file waiting for them (tus termination).
    void item.upload?.abort(true).catch(() => {});
    setState(item, 'cancelled', 'Cancelled.');
    item.speed.textContent = '';
    pump();
  } else {
    items.splice(items.indexOf(item), 1);
    item.li.remove();
  }
  finishIfDone();
}

/** The problem's detail (RFC 9457) the server answered with, or what went wrong on the way. */
function explain(error: Error): string {
  const response = (error as DetailedError).originalResponse;
  const body = response?.getBody();
  if (body) {
    try {
      const problem = JSON.parse(body) as { detail?: string };
      if (problem.detail) return problem.detail;
    } catch {}
  }
  if (response) return `The server refused the upload (${response.getStatus()}).`;
  return 'The connection was lost and retrying did not help. Check your connection, then press Upload to resume where it stopped.';
}

function start(item: Item): void {
  const metadata: Record<string, string> = { filename: item.file.name, filetype: item.file.type, name: nameInput.value.trim() };
  if (emailInput.value.trim()) metadata.email = emailInput.value.trim();
  item.upload ??= new Upload(item.file, {
    endpoint,
    metadata,
    chunkSize: CHUNK_BYTES,
    retryDelays: RETRY_DELAYS,
    removeFingerprintOnSuccess: true,
    onProgress(sent, total) {
      const now = performance.now();
      if (item.lastTime > 0 && now > item.lastTime) {
        const instant = ((sent - item.lastBytes) * 1000) / (now - item.lastTime);
        item.rate = item.rate === 0 ? instant : item.rate * 0.7 + instant * 0.3;
        item.speed.textContent = `${formatBytes(Math.max(0, item.rate))}/s`;
      }
      item.lastBytes = sent;
      item.lastTime = now;
      // The last byte is not in until the server says so (onSuccess).
      item.progress.value = Math.min(99, (sent / total) * 100);
    },
    onSuccess() {
      item.progress.value = 100;
      item.speed.textContent = '';
      setState(item, 'done', 'Uploaded.');
      pump();
      finishIfDone();
    },
    onError(error) {
      item.speed.textContent = '';
      setState(item, 'failed', explain(error));
      pump();
      finishIfDone();
    },
  });
  setState(item, 'uploading');
  item.lastTime = 0;
  const upload = item.upload;
  void upload.findPreviousUploads().then((previous) => {
    if (previous.length > 0) upload.resumeFromPreviousUpload(previous[0]);
    upload.start();
  });
}

/** Starts queued files, AT_ONCE at a time. */
function pump(): void {
  const running = items.filter((item) => item.state === 'uploading').length;
  for (const item of items.filter((candidate) => candidate.state === 'queued').slice(0, Math.max(0, AT_ONCE - running))) start(item);
}

function finishIfDone(): void {
  const open = items.some((item) => item.state === 'uploading' || item.state === 'queued');
  const failed = items.some((item) => item.state === 'failed');
  const done = items.some((item) => item.state === 'done');
  if (open) return;
  setBusy(false);
  if (!failed && done && !items.some((item) => item.state === 'chosen')) {
    if (redirect) {
      window.location.assign(redirect);
      return;
    }
    form.hidden = true;
    thanks.hidden = false;
    thanks.querySelector('h2')?.focus();
  }
}

function setBusy(busy: boolean): void {
  submit.disabled = busy;
  nameInput.disabled = busy;
  emailInput.disabled = busy;
  fileInput.disabled = busy;
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  if (!nameInput.value.trim()) {
    formError.textContent = 'Type your name, so that the people you send these files to know who sent them.';
    nameInput.focus();
    return;
  }
  if (!emailInput.checkValidity()) {
    formError.textContent = 'That email address does not look right. Correct it, or leave it empty.';
    emailInput.focus();
    return;
  }
  const waiting = items.filter((item) => item.state === 'chosen' || item.state === 'failed');
  if (waiting.length === 0) {
    formError.textContent = 'Choose at least one file first.';
    fileInput.focus();
    return;
  }
  formError.textContent = '';
  setBusy(true);
  for (const item of waiting) setState(item, 'queued', 'Waiting…');
  pump();
});

fileInput.addEventListener('change', () => {
  if (fileInput.files) addFiles(fileInput.files);
  fileInput.value = '';
});
drop.addEventListener('dragover', (event) => {
  event.preventDefault();
  drop.classList.add('over');
});
drop.addEventListener('dragleave', () => drop.classList.remove('over'));
drop.addEventListener('drop', (event) => {
  event.preventDefault();
  drop.classList.remove('over');
  if (!fileInput.disabled && event.dataTransfer?.files) addFiles(event.dataTransfer.files);
});
// A page left while files are on their way would stop them: ask first.
window.addEventListener('beforeunload', (event) => {
  if (items.some((item) => item.state === 'uploading' || item.state === 'queued')) event.preventDefault();
});
root.dataset.state = 'ready';
