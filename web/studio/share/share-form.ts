/**
 * The Share dialog's model, apart from its drawing: the values a new player
 * will get (the owner's stored preferences, else the interface's final
 * defaults), the values an existing player has, the request bodies of
 * createPlayer and updatePlayer made from them, and where a refusal goes
 * (the problem's JSON pointers, RFC 6901, to the field they name).
 */
import type { Player, Schemas } from '../api.ts';

export type Quality = Schemas['Quality'];
export type LoudnessPlatform = Schemas['LoudnessPlatform'];
export type BoxSubtitle = Schemas['BoxSubtitle'];
export type Role = Schemas['CollaboratorRole'];
export type Collaborator = Schemas['Collaborator'];
type Preferences = Schemas['PlayerPreferences'];

export const QUALITIES: Array<[Quality, string]> = [
  ['original', 'Original'],
  ['lossless', 'Lossless'],
  ['compressed', 'Compressed'],
];
export const PLATFORMS: Array<[LoudnessPlatform, string]> = [
  ['spotify', 'Spotify'],
  ['apple-music', 'Apple Music'],
  ['youtube', 'YouTube'],
  ['tidal', 'Tidal'],
  ['deezer', 'Deezer'],
  ['amazon-music', 'Amazon Music'],
];
export const SUBTITLES: Array<[BoxSubtitle, string]> = [
  ['artist', 'Artist'],
  ['timestamp', 'Date'],
  ['none', 'None'],
];
export const ROLES: Array<[Role, string]> = [
  ['viewer', 'Viewer'],
  ['editor', 'Editor'],
  ['admin', 'Admin'],
];

/** Everything the dialog edits, as its controls hold it (text fields as text). */
export interface ShareForm {
  name: string;
  public: boolean;
  downloads: boolean;
  comments: boolean;
  stacks: boolean;
  loudnessMatch: boolean;
  /** '' = no platform: the target is targetLufs, else the player's −14 LUFS. */
  loudnessPlatform: LoudnessPlatform | '';
  /** '' = none set. */
  targetLufs: string;
  metadata: boolean;
  isrc: boolean;
  /** '' = automatic (the highest the listener's connection allows). */
  quality: Quality | '';
  boxSubtitle: BoxSubtitle;
  serviceCTA: boolean;
  studio: boolean;
  /** A new password; '' keeps the one there is (or none). */
  password: string;
  removePassword: boolean;
  /** A datetime-local value ('' = never). */
  expires: string;
  paywall: boolean;
  /** In dollars, as typed ("4.99"). */
  price: string;
  fulfillment: 'allow-download' | 'allow-access';
  recipient: 'everyone' | 'customer';
  portal: boolean;
  portalTitle: string;
  portalGreeting: string;
  portalRedirect: string;
  /** The invitations to send with a new player. */
  invites: Collaborator[];
}

/**
 * The final defaults, as PlayerOptionsInput states them: "`metadata` false,
 * `isrc` false, `downloads` true, `comments` true, `loudnessMatch` false,
 * `studio` false, `stacks` false, `serviceCTA` true, `boxSubtitle` `artist`.
 * `quality`, `targetLufs` and `loudnessPlatform` have no final default", and
 * `public` "without one, `true`".
 */
export const FINAL_DEFAULTS = {
  public: true,
  metadata: false,
  isrc: false,
  downloads: true,
  comments: true,
  loudnessMatch: false,
  studio: false,
  stacks: false,
  serviceCTA: true,
  boxSubtitle: 'artist' as BoxSubtitle,
};

const blank = {
  password: '',
  removePassword: false,
  expires: '',
  paywall: false,
  price: '',
  fulfillment: 'allow-download' as const,
  recipient: 'customer' as const,
  portal: false,
  portalTitle: '',
  portalGreeting: '',
  portalRedirect: '',
  invites: [],
};

/** A new player's form: each value the one createPlayer would give it (the preference, else the final default). */
export function formForNew(name: string, preferences: Preferences | undefined): ShareForm {
  const o = preferences?.options ?? {};
  return {
    ...blank,
    name,
    public: preferences?.public ?? FINAL_DEFAULTS.public,
    downloads: o.downloads ?? FINAL_DEFAULTS.downloads,
    comments: o.comments ?? FINAL_DEFAULTS.comments,
    stacks: o.stacks ?? FINAL_DEFAULTS.stacks,
    loudnessMatch: o.loudnessMatch ?? FINAL_DEFAULTS.loudnessMatch,
    loudnessPlatform: o.loudnessPlatform ?? '',
    targetLufs: o.targetLufs === undefined ? '' : String(o.targetLufs),
    metadata: o.metadata ?? FINAL_DEFAULTS.metadata,
    isrc: o.isrc ?? FINAL_DEFAULTS.isrc,
    quality: o.quality ?? '',
    boxSubtitle: o.boxSubtitle ?? FINAL_DEFAULTS.boxSubtitle,
    serviceCTA: o.serviceCTA ?? FINAL_DEFAULTS.serviceCTA,
    studio: o.studio ?? FINAL_DEFAULTS.studio,
  };
}

/** A datetime-local value (the reader's zone) of a moment, and back. */
export function localDateTime(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
export function fromLocalDateTime(value: string): number | null {
  if (!value) return null;
  const ms = new Date(value).getTime();
  return Number.isFinite(ms) ? ms : Number.NaN;
}

/** An existing player's form: what it has now. */
export function formOfPlayer(player: Player): ShareForm {
  const o = player.options;
  return {
    ...blank,
    name: player.name,
    public: player.public,
    downloads: o.downloads,
    comments: o.comments,
    stacks: o.stacks,
    loudnessMatch: o.loudnessMatch,
    loudnessPlatform: o.loudnessPlatform ?? '',
    targetLufs: o.targetLufs === undefined ? '' : String(o.targetLufs),
    metadata: o.metadata,
    isrc: o.isrc,
    quality: o.quality ?? '',
    boxSubtitle: o.boxSubtitle,
    serviceCTA: o.serviceCTA,
    studio: o.studio,
    expires: player.expires === undefined ? '' : localDateTime(player.expires),
    paywall: !!player.payment,
    price: player.payment ? (player.payment.price / 100).toFixed(2) : '',
    fulfillment: player.payment?.fulfillment ?? 'allow-download',
    recipient: player.payment?.recipient ?? 'customer',
    portal: player.upload?.enabled ?? false,
    portalTitle: player.upload?.header ?? '',
    portalGreeting: player.upload?.greeting ?? '',
    portalRedirect: player.upload?.redirect ?? '',
  };
}

/** A refusal found before asking the server, as the server would word it: [field, what to fix]. */
export type LocalError = [FieldKey, string];

/** The price in cents, or the reason it is not one. */
function cents(price: string): number | string {
  const text = price.trim().replace(',', '.');
  if (!/^\d+(\.\d{1,2})?$/.test(text)) return 'Give the price in dollars, like 4.99.';
  const value = Math.round(Number(text) * 100);
  return value >= 1 ? value : 'The price must be at least 0.01.';
}

function optionsOf(form: ShareForm) {
  const lufs = form.targetLufs.trim() === '' ? undefined : Number(form.targetLufs);
  return {
    downloads: form.downloads,
    comments: form.comments,
    stacks: form.stacks,
    loudnessMatch: form.loudnessMatch,
    ...(form.loudnessPlatform ? { loudnessPlatform: form.loudnessPlatform } : {}),
    ...(lufs !== undefined ? { targetLufs: lufs } : {}),
    metadata: form.metadata,
    isrc: form.isrc,
    ...(form.quality ? { quality: form.quality } : {}),
    serviceCTA: form.serviceCTA,
    studio: form.studio,
  };
}

function paymentOf(form: ShareForm): Schemas['Payment'] | LocalError {
  const price = cents(form.price);
  if (typeof price === 'string') return ['price', price];
  return { price, fulfillment: form.fulfillment, recipient: form.recipient };
}

function uploadOf(form: ShareForm): Schemas['UploadPortal'] {
  return {
    enabled: form.portal,
    ...(form.portalTitle.trim() ? { header: form.portalTitle.trim() } : {}),
    ...(form.portalGreeting.trim() ? { greeting: form.portalGreeting.trim() } : {}),
    ...(form.portalRedirect.trim() ? { redirect: form.portalRedirect.trim() } : {}),
  };
}

const isLocalError = (value: unknown): value is LocalError => Array.isArray(value);

/**
 * createPlayer's body: every option as the dialog shows it, so the player
 * gets exactly what the owner saw (the preferences were read into the form).
 */
export function createBody(form: ShareForm, target: { projectid: string; folderid?: string; boxids?: string[] }): Schemas['CreatePlayerRequest'] | LocalError {
  const expires = fromLocalDateTime(form.expires);
  if (Number.isNaN(expires)) return ['expires', 'Give a date and time, or leave it empty for a link that never expires.'];
  const payment = form.paywall ? paymentOf(form) : undefined;
  if (isLocalError(payment)) return payment;
  return {
    name: form.name.trim(),
    projectid: target.projectid,
    ...(target.folderid ? { folderid: target.folderid } : {}),
    ...(target.boxids?.length ? { boxids: target.boxids } : {}),
    public: form.public,
    options: { ...optionsOf(form), boxSubtitle: form.boxSubtitle },
    ...(form.password ? { password: form.password } : {}),
    ...(expires !== null ? { expires } : {}),
    ...(payment ? { payment } : {}),
    ...(form.portal || form.portalTitle || form.portalGreeting || form.portalRedirect ? { upload: uploadOf(form) } : {}),
    ...(form.invites.length ? { collaborators: form.invites } : {}),
  };
}

/** updatePlayer's body: only what changed from the player ("Changes only the fields given"). */
export function updateBody(form: ShareForm, player: Player): Schemas['UpdatePlayerRequest'] | LocalError {
  const before = formOfPlayer(player);
  const body: Schemas['UpdatePlayerRequest'] = {};
  if (form.name.trim() !== before.name) body.name = form.name.trim();
  if (form.public !== before.public) body.public = form.public;
  const now = optionsOf(form);
  const then = optionsOf(before);
  const options: Record<string, unknown> = {};
  for (const key of Object.keys(now) as Array<keyof typeof now>) if (now[key] !== then[key]) options[key] = now[key];
  if (Object.keys(options).length) body.options = options as Schemas['PlayerOptionsUpdate'];
  if (form.removePassword) body.password = null;
  else if (form.password) body.password = form.password;
  if (form.expires !== before.expires) {
    const expires = fromLocalDateTime(form.expires);
    if (Number.isNaN(expires)) return ['expires', 'Give a date and time, or leave it empty for a link that never expires.'];
    body.expires = expires;
  }
  if (!form.paywall && before.paywall) body.payment = null;
  if (form.paywall && (!before.paywall || form.price !== before.price || form.fulfillment !== before.fulfillment || form.recipient !== before.recipient)) {
    const payment = paymentOf(form);
    if (isLocalError(payment)) return payment;
    body.payment = payment;
  }
  const portalChanged = form.portal !== before.portal || form.portalTitle !== before.portalTitle || form.portalGreeting !== before.portalGreeting || form.portalRedirect !== before.portalRedirect;
  if (portalChanged) body.upload = uploadOf(form);
  return body;
}

/** The fields a refusal can name; 'form' is the dialog as a whole. */
export type FieldKey =
  | 'name'
  | 'public'
  | 'quality'
  | 'loudnessPlatform'
  | 'targetLufs'
  | 'boxSubtitle'
  | 'password'
  | 'expires'
  | 'paywall'
  | 'price'
  | 'portal'
  | 'portalTitle'
  | 'portalGreeting'
  | 'portalRedirect'
  | 'invite'
  | 'form';

/** The field a JSON pointer of a request body names ('#/options/quality' → quality). */
export function fieldOfPointer(pointer: string): FieldKey {
  const path = pointer.replace(/^#?\//, '').split('/');
  const [head, second] = path;
  if (head === 'name' || head === 'password' || head === 'expires' || head === 'public') return head;
  if (head === 'options') {
    if (second === 'quality' || second === 'loudnessPlatform' || second === 'targetLufs' || second === 'boxSubtitle') return second;
    return 'form';
  }
  if (head === 'payment') return second === 'price' ? 'price' : 'paywall';
  if (head === 'upload') {
    if (second === 'header') return 'portalTitle';
    if (second === 'greeting') return 'portalGreeting';
    if (second === 'redirect') return 'portalRedirect';
    return 'portal';
  }
  if (head === 'collaborators') return 'invite';
  return 'form';
}

export type FieldErrors = Partial<Record<FieldKey, string>>;

/**
 * A refusal's messages, each by the field it names: a validation problem
 * lists its fields in `errors` with their pointers; a paywall refused (no
 * payment provider, or not the owner) goes to the paywall; anything else is
 * the dialog's as a whole.
 */
export function errorsOfProblem(problem: Partial<Schemas['Problem']> | undefined, status: number): FieldErrors {
  const errors: FieldErrors = {};
  const add = (key: FieldKey, message: string) => {
    errors[key] = errors[key] ? `${errors[key]} ${message}` : message;
  };
  for (const error of problem?.errors ?? []) {
    if (error.pointer) add(fieldOfPointer(error.pointer), error.detail);
  }
  if (Object.keys(errors).length === 0) {
    const detail = problem?.detail ?? problem?.title ?? `The server answered ${status}.`;
    add(/payment/.test(problem?.type ?? '') ? 'paywall' : 'form', detail);
  }
  return errors;
}
