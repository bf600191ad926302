/**
 * The inbox's Notifications: a new comment, a reply, files through a
 * portal, a file that failed analysis (GET /me/notifications), newest
 * first, each linking where it happened; the unread ones marked, and all
 * of them marked read at once (POST /me/notifications/read).
 */
import { useEffect, useState } from 'preact/hooks';
import { answer, type Schemas } from '../api.ts';
import { Link } from '../router.tsx';
import { useSession } from '../session.ts';
import { FormError, formatTime } from '../ui.tsx';

type Notification = Schemas['Notification'];

const KINDS: Record<Notification['kind'], string> = { comment: 'Comment', reply: 'Reply', 'portal-upload': 'Files received', 'analysis-failed': 'Analysis failed' };

export function Notifications() {
  const { studio } = useSession();
  const [list, setList] = useState<Notification[] | null>(null);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const load = async () => {
    const page = await answer(studio.client.GET('/me/notifications', { params: { query: { limit: 50 } } }));
    if (page.ok) setList(page.data);
    else setError(page.refusal.detail);
  };
  // Read once when the inbox opens, and again after Mark all read.
  useEffect(() => {
    void load();
  }, []);
  const unread = (list ?? []).filter((notification) => !notification.read).length;
  const markRead = async () => {
    setBusy(true);
    const done = await answer(studio.client.POST('/me/notifications/read', { body: {} }));
    setBusy(false);
    if (!done.ok) return setError(done.refusal.detail);
    setError(undefined);
    await load();
  };
  return (
    <section aria-labelledby="notifications-heading" class="inbox-section">
      <div class="page-head">
        <h2 id="notifications-heading">Notifications</h2>
        {unread ? (
          <button type="button" class="secondary small" disabled={busy} onClick={markRead}>
            Mark all read
          </button>
        ) : null}
      </div>
      <FormError id="notifications-error" message={error} />
      {list === null ? (
        error ? null : (
          <p class="meta">Loading…</p>
        )
      ) : list.length === 0 ? (
        <p class="empty">No notifications yet.</p>
      ) : (
        <ul class="items" aria-labelledby="notifications-heading">
          {list.map((notification) => {
            // A studio path opens in the app; a player page's (/p/…) is another page of the server.
            const href = `${studio.basePath}${notification.link}`;
            return (
              <li key={notification.id} class={notification.read ? 'item' : 'item unread'}>
                <div class="item-text">
                  <strong>
                    {notification.read ? null : <span class="visually-hidden">Unread: </span>}
                    {KINDS[notification.kind]}
                  </strong>
                  <span>{notification.summary}</span>
                  <span class="meta">{formatTime(notification.timeCreated)}</span>
                </div>
                {notification.link.startsWith('/p/') ? (
                  <a class="button-link secondary small" href={href}>
                    Open
                  </a>
                ) : (
                  <Link class="button-link secondary small" href={href}>
                    Open
                  </Link>
                )}
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
