/**
 * The page's only way to the server: the API, through the generated typed
 * client, exactly as any partner's code would call it. The player session
 * travels as its HttpOnly cookie (scoped to this player's API paths); the
 * page never sees it, and never holds an API token.
 */
import { createApiClient, type Problem, type Schemas } from '../../generated/client.ts';

export type PlayerView = Schemas['PlayerView'];
export type ViewTrack = Schemas['ViewTrack'];
export type ViewVersion = Schemas['ViewVersion'];
export type Comment = Schemas['Comment'];
export type Quality = Schemas['Quality'];

/** A refusal, as the page shows it: the problem's status, its `lock` for a 401, and what it says to do. */
export interface Refusal {
  status: number;
  lock?: 'collaborators' | 'password';
  type?: string;
  detail: string;
  retryAfter?: number;
}

export type Answer<T> = { ok: true; data: T } | { ok: false; refusal: Refusal };

function refusalOf(error: unknown, response: Response): Refusal {
  const problem = (error ?? {}) as Partial<Problem> & { lock?: Refusal['lock'] };
  const retryAfter = Number(response.headers.get('Retry-After'));
  return {
    status: response.status,
    lock: problem.lock,
    type: problem.type,
    detail: problem.detail ?? problem.title ?? `The server answered ${response.status}.`,
    retryAfter: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
  };
}

async function answer<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<Answer<T>> {
  try {
    const { data, error, response } = await call;
    if (response.ok && data !== undefined) return { ok: true, data };
    return { ok: false, refusal: refusalOf(error, response) };
  } catch {
    // fetch throws only when no answer came: the network, not the server.
    return { ok: false, refusal: { status: 0, detail: 'The server could not be reached. Check your connection and try again.' } };
  }
}

export class PlayerApi {
  private readonly client;

  readonly playerId: string;

  constructor(
    apiBase: string,
    playerId: string,
  ) {
    this.playerId = playerId;
    this.client = createApiClient({ baseUrl: apiBase });
  }

  private get player() {
    return { playerid: this.playerId };
  }

  view(): Promise<Answer<PlayerView>> {
    return answer(this.client.GET('/players/{playerid}/view', { params: { path: this.player } }));
  }

  /** Opens or extends this browser's session: with an invite token, the password, or a display name. */
  openSession(body: Schemas['PlayerSessionRequest']): Promise<Answer<PlayerView>> {
    return answer(this.client.POST('/players/{playerid}/session', { params: { path: this.player }, body }));
  }

  /** Starts paying for the paywall: the payment page to send this browser to. */
  checkout(): Promise<Answer<Schemas['Checkout']>> {
    return answer(this.client.POST('/players/{playerid}/checkout', { params: { path: this.player } }));
  }

  /**
   * Reports listening for the player's insights. `keepalive` when the page
   * is going away: the browser then sends it after the page is gone.
   */
  recordPlay(body: Schemas['RecordPlayRequest'], keepalive = false): Promise<Answer<Schemas['Play']>> {
    return answer(this.client.POST('/players/{playerid}/plays', { params: { path: this.player }, body, keepalive }));
  }

  comments(fileid: string): Promise<Answer<Comment[]>> {
    return answer(this.client.GET('/players/{playerid}/files/{fileid}/comments', { params: { path: { ...this.player, fileid } } }));
  }

  postComment(fileid: string, body: Schemas['CreateCommentRequest']): Promise<Answer<Comment>> {
    return answer(this.client.POST('/players/{playerid}/files/{fileid}/comments', { params: { path: { ...this.player, fileid } }, body }));
  }

  updateComment(fileid: string, commentid: string, body: Schemas['UpdateCommentRequest']): Promise<Answer<Comment>> {
    return answer(
      this.client.POST('/players/{playerid}/files/{fileid}/comments/{commentid}', { params: { path: { ...this.player, fileid, commentid } }, body }),
    );
  }
}
