/**
 * The uploads under way and done, each with a progressbar named by its file
 * (role progressbar, its accessible name the file's name), what happened,
 * and Cancel while it travels or Retry once it failed.
 */
import { formatBytes } from '../ui.tsx';
import type { UploadItem, UploadQueue } from './uploads.ts';

const STATE_WORDS: Record<UploadItem['state'], string> = {
  queued: 'Waiting…',
  uploading: '',
  done: 'Uploaded.',
  failed: '',
  cancelled: 'Cancelled.',
};

export function UploadList({ items, queue }: { items: UploadItem[]; queue: UploadQueue }) {
  if (items.length === 0) return null;
  const finished = items.filter((item) => item.state === 'done' || item.state === 'cancelled').length;
  return (
    <section class="uploads" aria-label="Uploads">
      <div class="uploads-head">
        <h2>
          Uploads <span class="meta">{`${finished} of ${items.length} finished`}</span>
        </h2>
        {finished > 0 ? (
          <button type="button" class="secondary small" onClick={() => queue.clear()}>
            Clear finished
          </button>
        ) : null}
      </div>
      <ul class="upload-list">
        {items.map((item) => (
          <li key={item.id} class="upload" data-state={item.state}>
            <span class="upload-name">{item.file.name}</span>
            <progress aria-label={item.file.name} max={Math.max(1, item.file.size)} value={item.state === 'done' ? item.file.size : item.sent} />
            <span class="meta upload-size">{item.state === 'uploading' ? `${formatBytes(item.sent)} of ${formatBytes(item.file.size)}` : formatBytes(item.file.size)}</span>
            <span class={item.state === 'failed' ? 'upload-message form-error' : 'upload-message meta'} role={item.state === 'failed' ? 'alert' : undefined}>
              {item.message ?? STATE_WORDS[item.state]}
            </span>
            {item.state === 'queued' || item.state === 'uploading' ? (
              <button type="button" class="secondary small" aria-label={`Cancel ${item.file.name}`} onClick={() => queue.cancel(item.id)}>
                Cancel
              </button>
            ) : item.state === 'failed' || item.state === 'cancelled' ? (
              <button type="button" class="secondary small" aria-label={`Retry ${item.file.name}`} onClick={() => queue.retry(item.id)}>
                Retry
              </button>
            ) : null}
          </li>
        ))}
      </ul>
    </section>
  );
}
