/**
 * /inbox: every comment on the musician's projects (GET /me/comments: open
 * ones first, then newest first), each naming its track, version and
 * author (a listener's marked with the visible word "Guest"), its time a
 * link that opens the track at that moment, with Reply (createComment with
 * `parentid`) and Done (updateComment `completed: true`); and the files
 * that arrived through an upload portal, waiting to be filed
 * (GET /me/held-files). The bar's Inbox link carries the count of open
 * comments (GET /me/inbox), read again on every navigation and whenever
 * this page changes something.
 *
 * A comment's time opens `/projects/{projectid}?file={fileid}&t={seconds}#comment-{commentid}`:
 * the project page reads `file` and `t` (the scheme the lead fixed for the
 * studio's deep links; notifications use the same path without `t`).
 */
import { useEffect, useState } from 'preact/hooks';
import { answer, nextCursor, type Answer, type Schemas } from '../api.ts';
import { Link, useLocation } from '../router.tsx';
import { useSession } from '../session.ts';
import { FormError, formatBytes, formatDuration, formatTime } from '../ui.tsx';
import { Notifications } from './notifications.tsx';
import './inbox.css';

type Comment = Schemas['Comment'];
type HeldFile = Schemas['HeldFile'];
type Status = 'all' | 'open' | 'done';

/** Said by the inbox when it changed what the count counts (a comment done, a reply sent). */
export const INBOX_CHANGED = 'studio:inbox-changed';
const inboxChanged = () => window.dispatchEvent(new Event(INBOX_CHANGED));

/** The count of open comments beside Inbox in the bar: read on each navigation and when the inbox says it changed. */
export function InboxCount() {
  const { studio } = useSession();
  const location = useLocation();
  const [open, setOpen] = useState(0);
  useEffect(() => {
    let live = true;
    const read = () =>
      void answer(studio.client.GET('/me/inbox')).then((summary) => {
        if (live && summary.ok) setOpen(summary.data.openComments);
      });
    read();
    window.addEventListener(INBOX_CHANGED, read);
    return () => {
      live = false;
      window.removeEventListener(INBOX_CHANGED, read);
    };
  }, [studio, location.href]);
  if (open === 0) return null;
  // The space is read between the word and the number ("Inbox 3"); the badge draws the number apart.
  return (
    <>
      <span class="visually-hidden"> </span>
      <span class="count" data-count={open}>
        {open}
      </span>
    </>
  );
}

/** One page of a list and the cursor of the next, as a "Show more" reads them. */
async function onePage<T>(call: Promise<{ data?: T[]; error?: unknown; response: Response }>): Promise<Answer<{ items: T[]; next?: string }>> {
  let response: Response | undefined;
  const page = await answer(
    call.then((result) => {
      response = result.response;
      return result;
    }),
  );
  return page.ok ? { ok: true, data: { items: page.data, next: response ? nextCursor(response) : undefined } } : page;
}

/** The track as a person names it: the stack (the song) when the file is a version of one, else the file. */
function trackName(track: NonNullable<Comment['track']>): string {
  return track.stackName ?? track.name;
}

/** The version within its stack: its version name, else its file name when that says more than the stack's. */
function versionName(track: NonNullable<Comment['track']>): string {
  if (!track.stackid) return '';
  if (track.versionName) return `${track.versionName} (${track.name})`;
  return track.name === track.stackName ? '' : track.name;
}

function commentLink(basePath: string, comment: Comment): string {
  const track = comment.track!;
  const t = comment.audioTimestamp !== undefined ? `&t=${Math.floor(comment.audioTimestamp * 1000) / 1000}` : '';
  return `${basePath}/projects/${encodeURIComponent(track.projectid)}?file=${encodeURIComponent(track.fileid)}${t}#comment-${encodeURIComponent(comment.id)}`;
}

function Author({ comment }: { comment: Comment }) {
  return (
    <span class="author">
      <strong>{comment.creator.name}</strong>
      {comment.creator.kind === 'listener' ? <span class="tag guest">Guest</span> : null}
      {comment.creator.mine ? <span class="tag">You</span> : null}
    </span>
  );
}

function ReplyForm({ comment, onSent, onCancel }: { comment: Comment; onSent: (reply: Comment) => void; onCancel: () => void }) {
  const { studio } = useSession();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const id = `reply-${comment.id}`;
  const send = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const message = String(new FormData(form).get('message') ?? '').trim();
    if (!message) return setError('Type your reply.');
    setBusy(true);
    const track = comment.track!;
    // Replies go one level deep: a reply to a reply answers its top-level comment.
    const parentid = comment.parentid ?? comment.id;
    const sent = await answer(studio.client.POST('/projects/{projectid}/files/{fileid}/comments', { params: { path: { projectid: track.projectid, fileid: track.fileid } }, body: { message, parentid } }));
    setBusy(false);
    if (!sent.ok) return setError(sent.refusal.detail);
    onSent({ ...sent.data, track: sent.data.track ?? track });
  };
  return (
    <form class="reply-form" noValidate onSubmit={send}>
      <label for={id} class="visually-hidden">
        Reply
      </label>
      {/* biome-ignore lint/a11y/noAutofocus: the field the person asked for by pressing Reply. */}
      <textarea id={id} name="message" rows={2} maxLength={5000} required autoFocus aria-describedby={`${id}-error`} placeholder={`Reply to ${comment.creator.name}`} />
      <FormError id={`${id}-error`} message={error} />
      <div class="actions">
        <button type="submit" class="small" disabled={busy}>
          Send
        </button>
        <button type="button" class="secondary small" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function CommentView({ comment, replies, onChange }: { comment: Comment; replies: Comment[]; onChange: (next: Comment) => void }) {
  const { studio } = useSession();
  const [replying, setReplying] = useState(false);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const track = comment.track!;
  const id = `inbox-${comment.id}`;
  const setDone = async (completed: boolean) => {
    setBusy(true);
    setError(undefined);
    const saved = await answer(
      studio.client.POST('/projects/{projectid}/files/{fileid}/comments/{commentid}', { params: { path: { projectid: track.projectid, fileid: track.fileid, commentid: comment.id } }, body: { completed } }),
    );
    setBusy(false);
    if (!saved.ok) return setError(saved.refusal.detail);
    onChange({ ...saved.data, track: saved.data.track ?? track });
    inboxChanged();
  };
  const version = versionName(track);
  return (
    <article class={comment.completed ? 'comment done' : 'comment'} aria-labelledby={`${id}-head`}>
      <header class="comment-head" id={`${id}-head`}>
        <Author comment={comment} />
        <span class="meta">
          on <span class="track">{trackName(track)}</span>
          {version ? <span class="version"> · {version}</span> : null} · {track.projectName}
        </span>
      </header>
      <div class="comment-body">
        <Link class="time-button" href={commentLink(studio.basePath, comment)} title={`Open ${trackName(track)} at this moment`}>
          {comment.audioTimestamp !== undefined ? formatDuration(comment.audioTimestamp) + (comment.audioTimestampEnd !== undefined ? `–${formatDuration(comment.audioTimestampEnd)}` : '') : 'Track'}
        </Link>
        <p class="message">{comment.message}</p>
      </div>
      <p class="meta comment-foot">
        <time dateTime={new Date(comment.timeCreated).toISOString()}>{formatTime(comment.timeCreated)}</time>
        {comment.completed ? <span class="tag done-tag">Done</span> : null}
      </p>
      {replies.length > 0 ? (
        <ul class="replies" aria-label={`Replies to ${comment.creator.name}`}>
          {replies.map((reply) => (
            <li key={reply.id} class="reply">
              <Author comment={reply} />
              <p class="message">{reply.message}</p>
              <p class="meta">
                <time dateTime={new Date(reply.timeCreated).toISOString()}>{formatTime(reply.timeCreated)}</time>
              </p>
            </li>
          ))}
        </ul>
      ) : null}
      <FormError id={`${id}-error`} message={error} />
      {replying ? (
        <ReplyForm
          comment={comment}
          onCancel={() => setReplying(false)}
          onSent={(reply) => {
            setReplying(false);
            onChange(reply);
            inboxChanged();
          }}
        />
      ) : (
        <div class="actions">
          <button type="button" class="secondary small" aria-describedby={`${id}-head`} onClick={() => setReplying(true)}>
            Reply
          </button>
          {comment.completed ? (
            <button type="button" class="secondary small" aria-describedby={`${id}-head`} disabled={busy} onClick={() => setDone(false)}>
              Reopen
            </button>
          ) : (
            <button type="button" class="small" aria-describedby={`${id}-head`} disabled={busy} onClick={() => setDone(true)}>
              Done
            </button>
          )}
        </div>
      )}
    </article>
  );
}

const STATUSES: Array<[Status, string]> = [
  ['all', 'All'],
  ['open', 'Open'],
  ['done', 'Done'],
];

function Comments() {
  const { studio } = useSession();
  const [status, setStatus] = useState<Status>('all');
  const [comments, setComments] = useState<Comment[] | null>(null);
  const [next, setNext] = useState<string>();
  const [error, setError] = useState<string>();
  const [loadingMore, setLoadingMore] = useState(false);

  const load = async (cursor?: string) => {
    const page = await onePage(studio.client.GET('/me/comments', { params: { query: { status, limit: 50, cursor } } }));
    if (!page.ok) return setError(page.refusal.detail);
    setError(undefined);
    setComments((before) => (cursor ? [...(before ?? []), ...page.data.items] : page.data.items));
    setNext(page.data.next);
  };
  // A new filter reads the list again from its start.
  useEffect(() => {
    setComments(null);
    void load();
  }, [status]);

  /** A comment as the API answers it now: changed in place, or a new reply added. */
  const change = (next: Comment) =>
    setComments((before) => {
      const list = before ?? [];
      return list.some((comment) => comment.id === next.id) ? list.map((comment) => (comment.id === next.id ? next : comment)) : [...list, next];
    });

  // Replies under the comment they answer (oldest first, as a conversation reads); a reply whose comment is not loaded stands alone.
  const loaded = new Set((comments ?? []).map((comment) => comment.id));
  // Open means waiting for the musician: their own comments and replies ask nothing of them (as the bar's count says).
  const top = (comments ?? []).filter((comment) => (!comment.parentid || !loaded.has(comment.parentid)) && !(status === 'open' && comment.creator.mine));
  const repliesOf = (comment: Comment) =>
    (comments ?? []).filter((reply) => reply.parentid === comment.id && reply.id !== comment.id).sort((a, b) => a.timeCreated - b.timeCreated);

  return (
    <section aria-labelledby="comments-heading" class="inbox-section">
      <div class="page-head">
        <h2 id="comments-heading">Comments</h2>
        <fieldset class="chips">
          <legend class="visually-hidden">Show</legend>
          {STATUSES.map(([value, label]) => (
            <button key={value} type="button" class="chip" aria-pressed={status === value} onClick={() => setStatus(value)}>
              {label}
            </button>
          ))}
        </fieldset>
      </div>
      <FormError id="comments-error" message={error} />
      {comments === null ? (
        error ? null : (
          <p class="meta" aria-live="polite">
            Loading comments…
          </p>
        )
      ) : top.length === 0 ? (
        <p class="empty">{status === 'done' ? 'No comment is done yet.' : status === 'open' ? 'Nothing open: every comment is done.' : 'No comments yet. When someone comments on a track of yours, it shows here.'}</p>
      ) : (
        <ul class="inbox-list" aria-label="Comments">
          {top.map((comment) => (
            <li key={comment.id}>
              <CommentView comment={comment} replies={repliesOf(comment)} onChange={change} />
            </li>
          ))}
        </ul>
      )}
      {next ? (
        <button
          type="button"
          class="secondary"
          disabled={loadingMore}
          onClick={async () => {
            setLoadingMore(true);
            await load(next);
            setLoadingMore(false);
          }}
        >
          Show more
        </button>
      ) : null}
    </section>
  );
}

function HeldFiles() {
  const { studio } = useSession();
  const [files, setFiles] = useState<HeldFile[] | null>(null);
  const [error, setError] = useState<string>();
  useEffect(() => {
    void onePage(studio.client.GET('/me/held-files', { params: { query: { limit: 100 } } })).then((page) => {
      if (page.ok) setFiles(page.data.items);
      else setError(page.refusal.detail);
    });
  }, [studio]);
  if (!error && (files === null || files.length === 0)) return null;
  return (
    <section aria-labelledby="held-heading" class="inbox-section">
      <h2 id="held-heading">Files waiting to be filed</h2>
      <p class="hint">Sent through an upload portal: they wait in the project’s “Portal uploads” folder until you move them.</p>
      <FormError id="held-error" message={error} />
      <ul class="items" aria-labelledby="held-heading">
        {(files ?? []).map(({ file, projectid, projectName }) => {
          const uploader = file.object === 'file' ? file.uploader : undefined;
          return (
            <li key={file.id} class="item">
              <div class="item-text">
                <strong>{file.name}</strong>
                <span class="meta">
                  {[uploader ? `from ${[uploader.name, uploader.email ? `<${uploader.email}>` : ''].filter(Boolean).join(' ')}` : '', file.object === 'file' && file.size !== undefined ? formatBytes(file.size) : '', formatTime(file.timeCreated)]
                    .filter(Boolean)
                    .join(' · ')}
                </span>
              </div>
              <Link class="button-link secondary small" href={`${studio.basePath}/projects/${encodeURIComponent(projectid)}?file=${encodeURIComponent(file.id)}`}>
                Open in {projectName}
              </Link>
            </li>
          );
        })}
      </ul>
    </section>
  );
}

export function InboxPage() {
  useEffect(() => {
    document.title = 'Inbox · Audio Share';
  }, []);
  return (
    <>
      <h1>Inbox</h1>
      <div class="inbox">
        <Comments />
        <HeldFiles />
        <Notifications />
      </div>
    </>
  );
}
