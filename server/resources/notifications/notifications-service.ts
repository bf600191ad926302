/**
 * Notifications: what an account is told of, in the app and by mail.
 *
 * Each is recorded by the service where its event happens, in that event's
 * transaction (as webhooks' outbox is), with one call of this module:
 * `notifyOfComment` (comments-service), `notifyOfPortalUpload`
 * (portal-service), `notifyOfFailedAnalysis` (upload-events). So a comment
 * that commits always notifies, and one that rolls back never does.
 *
 * Mail, when the server sends any (SMTP_URL), never goes out in the
 * request: with `immediate`, the event's transaction queues a
 * NOTIFICATION_MAIL job, which makes the mail and queues it as every mail
 * is (mail-outbox.ts: sealed, retried); with `digest`, it schedules the
 * account's NOTIFICATION_DIGEST job for the next midnight UTC, unless one
 * is scheduled, and that job mails every notification still pending in
 * one mail. A notification's `mail` state ('pending' → 'sent' or 'none') is
 * changed by one UPDATE that claims it, so none is mailed twice.
 *
 * Links are paths of the studio, one scheme for the API and the mails:
 * `/projects/{projectid}?file={fileid}#comment-{commentid}` for a comment,
 * `/projects/{projectid}?file={fileid}` for a file; a reply to a comment
 * written on a player page links to that player
 * (`/p/{playerid}?file={fileid}#comment-{commentid}`), where its author,
 * who may not be a member of the project, wrote it.
 */
import type { Context } from '../../context.ts';
import type { Schemas } from '../../lib/api-types.ts';
import type { Store } from '../../repositories.ts';
import type { Caller } from '../../auth/access.ts';
import type { JobHandler } from '../../jobs/worker.ts';
import { newId } from '../../lib/ids.ts';
import { notificationDigestMail, notificationMail, oneLine } from '../../mail/templates.ts';
import { queueMail } from '../mail/mail-outbox.ts';
import type { MailSetting, NotificationDetails, NotificationKind, NotificationRecord } from './notification-repository.ts';

/** What recording a notification uses: the clock, whether mail is set up, and the job queue's wake-up. */
export type NotifyPorts = Pick<Context, 'clock' | 'config' | 'jobQueued'>;

/** Mails one notification soon after it happened (the setting `immediate`); payload `{ notificationId }`. */
export const NOTIFICATION_MAIL = 'notification-mail';
/** Mails an account's pending notifications in one mail (the setting `digest`); payload `{ userId }`. */
export const NOTIFICATION_DIGEST = 'notification-digest';

/** The setting of an account that never chose one. */
export const DEFAULT_MAIL_SETTING: MailSetting = 'immediate';

const DAY_MS = 86_400_000;

/** When a digest scheduled at `now` goes out: the next midnight UTC, so an account gets at most one a day. */
export const nextDigestAt = (now: number) => Math.floor(now / DAY_MS) * DAY_MS + DAY_MS;

/** What a member without a display name is called here too, as comments show them: never their email. */
const MEMBER_FALLBACK_NAME = 'Project member';
/** How much of a comment a summary quotes. */
const SUMMARY_QUOTE = 140;

type Box = NonNullable<Awaited<ReturnType<Store['boxes']['get']>>>;
type Project = NonNullable<Awaited<ReturnType<Store['projects']['get']>>>;
/** The parts of a comment that notifying reads (structurally a CommentRecord). */
export interface NotifiedComment {
  id: string;
  fileId: string;
  parentId: string | null;
  message: string;
  author: { kind: 'member' | 'listener'; userId: string | null; name: string | null };
  playerId: string | null;
}

interface NewNotification {
  userId: string;
  kind: NotificationKind;
  projectId: string;
  fileId: string | null;
  commentId: string | null;
  actorId: string | null;
  summary: string;
  link: string;
  details: NotificationDetails;
}

const fileLink = (projectId: string, fileId: string) => `/projects/${encodeURIComponent(projectId)}?file=${encodeURIComponent(fileId)}`;
const commentLink = (projectId: string, fileId: string, commentId: string) => `${fileLink(projectId, fileId)}#comment-${encodeURIComponent(commentId)}`;
const playerCommentLink = (playerId: string, fileId: string, commentId: string) =>
  `/p/${encodeURIComponent(playerId)}?file=${encodeURIComponent(fileId)}#comment-${encodeURIComponent(commentId)}`;

/** A name in a summary: one line, short, quoted by the caller. */
const name = (text: string | null | undefined, fallback: string) => oneLine(text ?? '') || fallback;

/**
 * Writes the notification in `store`'s transaction and, as the account's
 * setting says and when the server sends mail, queues its mail or schedules
 * the account's digest.
 */
async function record(ctx: NotifyPorts, store: Store, input: NewNotification): Promise<void> {
  const now = ctx.clock.now();
  const setting = ctx.config.mail ? ((await store.notifications.settingsOf(input.userId))?.mail ?? DEFAULT_MAIL_SETTING) : 'never';
  const notification: NotificationRecord = { id: newId('ntf'), ...input, mail: setting === 'never' ? 'none' : 'pending', timeCreated: now, timeRead: null };
  await store.notifications.insert(notification);
  if (setting === 'immediate') {
    await store.jobs.enqueue(NOTIFICATION_MAIL, { notificationId: notification.id }, { now, maxAttempts: 5 });
  } else if (setting === 'digest') {
    const due = nextDigestAt(now);
    // The queue has no "run at" of its own: a job enqueued as of `due` is due then.
    if (await store.notifications.scheduleDigest(input.userId, due, now)) await store.jobs.enqueue(NOTIFICATION_DIGEST, { userId: input.userId }, { now: due, maxAttempts: 5 });
  }
  // Woken once the rows are there for it to read, as the outbox does.
  if (setting !== 'never') store.afterCommit(() => ctx.jobQueued());
}

/**
 * A comment was written (call in the transaction that inserts it): a reply
 * tells the author of the comment it replies to, when they have an account
 * and are not its writer; and the project's owner is told of any comment
 * but their own, unless the reply told them already.
 */
export async function notifyOfComment(ctx: NotifyPorts, store: Store, file: Box, comment: NotifiedComment): Promise<void> {
  const project = await store.projects.get(file.projectId);
  if (!project) return;
  const writer = comment.author.userId;
  const actor =
    comment.author.kind === 'listener'
      ? `${name(comment.author.name, 'A listener')} (guest)`
      : name(writer ? (await store.users.get(writer))?.name : null, MEMBER_FALLBACK_NAME);
  const track = name(file.name, 'a file');
  const quote = oneLine(comment.message, SUMMARY_QUOTE);
  const details: NotificationDetails = { track: file.name, project: project.name, actor, text: comment.message };
  let replied: string | null = null;
  if (comment.parentId !== null) {
    const parent = await store.comments.get(file.id, comment.parentId);
    const author = parent?.author.userId ?? null;
    if (parent && author !== null && author !== writer) {
      replied = author;
      const link = author !== project.ownerId && parent.playerId !== null ? playerCommentLink(parent.playerId, file.id, comment.id) : commentLink(project.id, file.id, comment.id);
      await record(ctx, store, {
        userId: author,
        kind: 'reply',
        projectId: project.id,
        fileId: file.id,
        commentId: comment.id,
        actorId: writer,
        summary: `${actor} replied to your comment on “${track}”: “${quote}”`,
        link,
        details,
      });
    }
  }
  if (project.ownerId !== writer && project.ownerId !== replied) {
    await record(ctx, store, {
      userId: project.ownerId,
      kind: 'comment',
      projectId: project.id,
      fileId: file.id,
      commentId: comment.id,
      actorId: writer,
      summary: `${actor} commented on “${track}”: “${quote}”`,
      link: commentLink(project.id, file.id, comment.id),
      details,
    });
  }
}

/** A file arrived through the upload portal of player `playerId` (call in the transaction that completes it): its owner is told. */
export async function notifyOfPortalUpload(ctx: NotifyPorts, store: Store, file: Box, playerId: string): Promise<void> {
  const [project, player] = await Promise.all([store.projects.get(file.projectId), store.players.get(playerId)]);
  if (!project) return;
  const actor = name(file.uploaderName, 'Someone');
  const portal = player ? ` of “${name(player.name, 'a player')}”` : '';
  await record(ctx, store, {
    userId: project.ownerId,
    kind: 'portal-upload',
    projectId: project.id,
    fileId: file.id,
    commentId: null,
    actorId: null,
    summary: `${actor} sent “${name(file.name, 'a file')}” through the upload portal${portal}`,
    link: fileLink(project.id, file.id),
    details: { track: file.name, project: project.name, actor, text: null },
  });
}

/** A file's analysis failed for good (call in the transaction that marks it failed): the project's owner is told why. */
export async function notifyOfFailedAnalysis(ctx: NotifyPorts, store: Store, project: Project, file: Box): Promise<void> {
  const reason = file.statusReason ? `: ${oneLine(file.statusReason, 200)}` : '';
  await record(ctx, store, {
    userId: project.ownerId,
    kind: 'analysis-failed',
    projectId: project.id,
    fileId: file.id,
    commentId: null,
    actorId: null,
    summary: `“${name(file.name, 'a file')}” could not be analysed${reason}`,
    link: fileLink(project.id, file.id),
    details: { track: file.name, project: project.name, actor: null, text: file.statusReason },
  });
}

function notificationJson(notification: NotificationRecord): Schemas['Notification'] {
  return {
    id: notification.id,
    object: 'notification',
    kind: notification.kind,
    projectid: notification.projectId,
    ...(notification.fileId !== null ? { fileid: notification.fileId } : {}),
    ...(notification.commentId !== null ? { commentid: notification.commentId } : {}),
    summary: notification.summary,
    link: notification.link,
    timeCreated: notification.timeCreated,
    read: notification.timeRead !== null,
  };
}

export async function listNotifications(ctx: Pick<Context, 'store'>, caller: Caller, options: { unread: boolean }): Promise<Schemas['Notification'][]> {
  return (await ctx.store.notifications.listOf(caller.id, options)).map(notificationJson);
}

export async function markNotificationsRead(ctx: Pick<Context, 'store' | 'clock'>, caller: Caller, body: Schemas['MarkNotificationsReadRequest']): Promise<Schemas['NotificationsMarkedRead']> {
  await ctx.store.notifications.markRead(caller.id, body.ids, ctx.clock.now());
  return { unread: await ctx.store.notifications.countUnread(caller.id) };
}

export async function getNotificationSettings(ctx: Pick<Context, 'store'>, caller: Caller): Promise<Schemas['NotificationSettings']> {
  return { mail: (await ctx.store.notifications.settingsOf(caller.id))?.mail ?? DEFAULT_MAIL_SETTING };
}

export async function updateNotificationSettings(ctx: Pick<Context, 'store'>, caller: Caller, body: Schemas['UpdateNotificationSettingsRequest']): Promise<Schemas['NotificationSettings']> {
  const mail = body.mail;
  if (mail !== undefined) {
    await ctx.store.transaction(async (store) => {
      await store.notifications.setMail(caller.id, mail);
      // "never" means none of them: those waiting for a digest (or their mail job) are not mailed either.
      if (mail === 'never') await store.notifications.claimPending({ userId: caller.id }, 'none');
    });
  }
  return getNotificationSettings(ctx, caller);
}

/** The studio's address of a notification's link, for a mail. */
const urlOf = (ctx: Pick<Context, 'config'>, link: string) => `${ctx.config.publicUrl}${link}`;

/**
 * The jobs that mail notifications, for the mail worker (which runs only
 * where mail is set up). Each claims its notifications and queues their
 * mail in one transaction: a retry after a crash finds them claimed, or
 * not, and the mail queued with them, or not.
 */
export function notificationMailJobs(ctx: Pick<Context, 'store' | 'clock' | 'config' | 'secrets' | 'logger' | 'jobQueued'>): Record<string, JobHandler<Store>> {
  const settingsUrl = urlOf(ctx, '/settings');
  // Nothing to undo: a notification whose mail job failed stays in the app, and pending ones go in the next digest.
  const failed = async (_store: Store, job: { id: string; kind: string }, reason: string) => ctx.logger.error('a notification mail could not be made', { jobId: job.id, kind: job.kind, reason });
  return {
    [NOTIFICATION_MAIL]: {
      failed,
      async run({ job }) {
        const { notificationId } = job.payload as { notificationId: string };
        await ctx.store.transaction(async (store) => {
          const current = await store.notifications.get(notificationId);
          // Gone with its comment or project, or mailed (or dropped) already.
          if (current?.mail !== 'pending') return;
          const settings = await store.notifications.settingsOf(current.userId);
          // Switched to never since: not mailed. (Switched to digest: it is on its way already, and goes.)
          if (settings?.mail === 'never') {
            await store.notifications.claimPending({ id: notificationId }, 'none');
            return;
          }
          const [notification] = await store.notifications.claimPending({ id: notificationId }, 'sent');
          const user = notification && (await store.users.get(notification.userId));
          if (!notification || !user) return;
          const { details } = notification;
          const message = notificationMail({
            to: user.email,
            kind: notification.kind,
            track: details.track ?? '',
            project: details.project,
            actor: details.actor,
            text: details.text,
            url: urlOf(ctx, notification.link),
            settingsUrl,
          });
          await queueMail(ctx, store, `notification-${notification.kind}`, message);
        });
      },
    },
    [NOTIFICATION_DIGEST]: {
      failed,
      async run({ job }) {
        const { userId } = job.payload as { userId: string };
        await ctx.store.transaction(async (store) => {
          await store.notifications.digestDone(userId, ctx.clock.now());
          const settings = await store.notifications.settingsOf(userId);
          const user = await store.users.get(userId);
          const items = await store.notifications.claimPending({ userId }, settings?.mail === 'never' || !user ? 'none' : 'sent');
          if (!user || items.length === 0 || settings?.mail === 'never') return;
          const message = notificationDigestMail({
            to: user.email,
            name: user.name ?? '',
            items: items.map((item) => ({ summary: item.summary, url: urlOf(ctx, item.link) })),
            inboxUrl: urlOf(ctx, '/inbox'),
            settingsUrl,
          });
          await queueMail(ctx, store, 'notification-digest', message);
        });
      },
    },
  };
}
