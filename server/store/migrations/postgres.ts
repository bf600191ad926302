import type { Migration } from '../db.ts';
import { initialSchema } from './schema.ts';
import { audioPipelineSchema } from './jobs.ts';
import { versionsSchema } from './versions.ts';
import { uploadClaimsSchema } from './upload-claims.ts';
import { commentsSchema } from './comments.ts';
import { listeningSchema } from './listening.ts';
import { deploymentSchema } from './deployment.ts';
import { webhooksSchema } from './webhooks.ts';
import { paymentsSchema } from './payments.ts';
import { portalSchema } from './portal.ts';
import { playerOwnersSchema } from './player-owners.ts';
import { commentPlayersSchema } from './comment-players.ts';
import { portalRoomSchema } from './portal-room.ts';
import { portalHeldSchema } from './portal-held.ts';
import { accountsSchema } from './accounts.ts';
import { authChallengeExpirySchema } from './auth-challenge-expiry.ts';
import { autoStackSchema } from './auto-stack.ts';
import { insightsSchema } from './insights.ts';
import { notificationsSchema } from './notifications.ts';
import { projectUploadsSchema } from './project-uploads.ts';
import { idempotencySchema } from './idempotency.ts';
import { oauthSchema } from './oauth.ts';
import { projectContentSchema } from './project-content.ts';
import { listingPagesSchema } from './listing-pages.ts';
import { sweepIndexesSchema } from './sweep-indexes.ts';
import { appGrantsSchema } from './app-grants.ts';
import { insightsListenersSchema } from './insights-listeners.ts';
import { deliveryQueueSchema } from './delivery-queue.ts';

export const postgresMigrations: Migration[] = [
  { version: 1, name: 'initial schema', sql: initialSchema('BIGINT') },
  { version: 2, name: 'audio pipeline', sql: audioPipelineSchema('BIGINT') },
  { version: 3, name: 'resource versions', sql: versionsSchema('BIGINT') },
  { version: 4, name: 'upload claim deadlines', sql: uploadClaimsSchema('BIGINT') },
  { version: 5, name: 'comments, reactions and display names', sql: commentsSchema('BIGINT') },
  { version: 6, name: 'player passwords, expiry, invites and purchases', sql: listeningSchema('BIGINT') },
  { version: 7, name: 'deployment settings (signing secret fingerprint)', sql: deploymentSchema('BIGINT') },
  { version: 8, name: 'webhook subscriptions and deliveries', sql: webhooksSchema('BIGINT') },
  { version: 9, name: 'upload portals: uploader names, portal uploads', sql: portalSchema('BIGINT') },
  { version: 10, name: 'purchases paid through a payment provider', sql: paymentsSchema('BIGINT') },
  { version: 11, name: 'the player a comment was made on', sql: commentPlayersSchema() },
  { version: 12, name: 'players belong to the owner of their project; who created one is kept', sql: playerOwnersSchema() },
  { version: 13, name: 'portal uploads take the room of the bytes they have', sql: portalRoomSchema('BIGINT') },
  { version: 14, name: 'portal folders hold what strangers send', sql: portalHeldSchema() },
  { version: 15, name: 'accounts: passwords, sessions, scoped tokens, passkeys, single sign-on, one-time links, security events', sql: accountsSchema('BIGINT') },
  { version: 18, name: 'expired passkey and sign-in ceremonies found by an index', sql: authChallengeExpirySchema() },
  { version: 19, name: 'the account preference for versions that stack themselves', sql: autoStackSchema() },
  { version: 21, name: 'listener insights: plays and downloads through players', sql: insightsSchema('BIGINT') },
  { version: 22, name: 'notifications of comments, replies, portal uploads and failed analyses, and how they are mailed', sql: notificationsSchema('BIGINT') },
  { version: 23, name: 'resumable uploads of project members', sql: projectUploadsSchema('BIGINT') },
  { version: 24, name: 'idempotency keys: the first answer to a request, replayed to its retries', sql: idempotencySchema('BIGINT') },
  { version: 25, name: 'the OAuth authorization server: apps, grants, codes and tokens', sql: oauthSchema('BIGINT') },
  { version: 27, name: 'the size and last change of projects read from indexes', sql: projectContentSchema() },
  { version: 28, name: 'the pages of players and of a project\'s boxes read from indexes in their orders', sql: listingPagesSchema('postgres') },
  { version: 29, name: 'what the sweeps delete and the job queue claims found by indexes', sql: sweepIndexesSchema() },
  { version: 30, name: 'what an OAuth app makes belongs to its grant: webhooks, idempotency keys', sql: appGrantsSchema('BIGINT') },
  { version: 31, name: 'insights tell listeners apart by who they are, not by the name they typed', sql: insightsListenersSchema() },
  { version: 32, name: 'webhook deliveries are their own queue: the delivery row is the job', sql: deliveryQueueSchema('BIGINT') },
];
