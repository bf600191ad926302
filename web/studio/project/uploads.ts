/**
 * The project's upload queue: every file dropped or chosen waits its turn,
 * AT_ONCE of them travel at a time, each with its progress, and each can be
 * cancelled or, once failed, retried. The bytes go through a Transport
 * (transport.ts), which the queue does not look inside.
 */
import type { Transport } from './transport.ts';

/** Files sent at the same time: enough to fill a connection, few enough that each shows progress. */
export const AT_ONCE = 3;

export type UploadState = 'queued' | 'uploading' | 'done' | 'failed' | 'cancelled';

export interface UploadItem {
  id: number;
  file: File;
  state: UploadState;
  sent: number;
  message?: string;
  boxid?: string;
  parentid?: string;
}

export class UploadQueue {
  items: UploadItem[] = [];
  private next = 1;
  private readonly running = new Map<number, { cancel(): void }>();
  private readonly listeners = new Set<() => void>();
  private readonly projectid: string;
  private readonly transport: Transport;
  private readonly autoStack: () => boolean | undefined;
  private readonly onStored: (item: UploadItem) => void;

  constructor(projectid: string, transport: Transport, autoStack: () => boolean | undefined, onStored: (item: UploadItem) => void) {
    this.projectid = projectid;
    this.transport = transport;
    this.autoStack = autoStack;
    this.onStored = onStored;
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    // A new array each time: the page's state sees a change.
    this.items = [...this.items];
    for (const listener of this.listeners) listener();
  }

  private update(item: UploadItem, change: Partial<UploadItem>): void {
    const index = this.items.findIndex((candidate) => candidate.id === item.id);
    if (index < 0) return;
    Object.assign(item, change);
    this.items[index] = { ...item };
    this.changed();
  }

  add(files: Iterable<File>, parentid?: string): void {
    for (const file of files) this.items.push({ id: this.next++, file, state: 'queued', sent: 0, parentid });
    this.changed();
    this.pump();
  }

  get active(): boolean {
    return this.items.some((item) => item.state === 'queued' || item.state === 'uploading');
  }

  cancel(id: number): void {
    const item = this.items.find((candidate) => candidate.id === id);
    if (!item || (item.state !== 'queued' && item.state !== 'uploading')) return;
    this.running.get(id)?.cancel();
    this.running.delete(id);
    this.update(item, { state: 'cancelled', message: 'Cancelled.' });
    this.pump();
  }

  retry(id: number): void {
    const item = this.items.find((candidate) => candidate.id === id);
    if (!item || (item.state !== 'failed' && item.state !== 'cancelled')) return;
    this.update(item, { state: 'queued', sent: 0, message: undefined });
    this.pump();
  }

  /** Takes the finished and cancelled ones off the list. */
  clear(): void {
    this.items = this.items.filter((item) => item.state === 'queued' || item.state === 'uploading' || item.state === 'failed');
    this.changed();
  }

  /** Stops everything under way: the page is left. */
  stop(): void {
    for (const upload of this.running.values()) upload.cancel();
    this.running.clear();
  }

  private pump(): void {
    let free = AT_ONCE - this.items.filter((item) => item.state === 'uploading').length;
    for (const item of this.items) {
      if (free <= 0) break;
      if (item.state !== 'queued') continue;
      free -= 1;
      this.start(item);
    }
  }

  private start(item: UploadItem): void {
    this.update(item, { state: 'uploading', sent: 0 });
    const finish = (change: Partial<UploadItem>) => {
      if (!this.running.has(item.id)) return;
      this.running.delete(item.id);
      this.update(item, change);
      if (change.state === 'done') this.onStored(item);
      this.pump();
    };
    const upload = this.transport.start(
      { projectid: this.projectid, file: item.file, parentid: item.parentid, autoStack: this.autoStack() },
      {
        onProgress: (sent) => {
          if (this.running.has(item.id) && item.state === 'uploading') this.update(item, { sent });
        },
        onSuccess: (boxid) => finish({ state: 'done', sent: item.file.size, boxid, message: 'Uploaded.' }),
        onError: (message) => finish({ state: 'failed', message }),
      },
    );
    this.running.set(item.id, upload);
  }
}
