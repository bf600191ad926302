/**
 * The one problem type only comments answer: a listener's write that needs a
 * player session with a display name (RFC 9457). It extends HttpProblem, as
 * the listener problems do (listening/listener-problems.ts), so that the one
 * error handler writes it, headers included.
 */
import { HttpProblem } from '../../lib/problems.ts';

export class NameRequiredProblem extends HttpProblem {
  constructor(playerId: string, detail: string) {
    // RFC 9110 §15.5.2: "The server generating a 401 response MUST send a WWW-Authenticate header field containing at
    // least one challenge applicable to the target resource." The credential is a player session, as for a locked player.
    super('name-required', detail, { headers: { 'WWW-Authenticate': `PlayerSession realm="${playerId}"` } });
  }
}

const openSession = (playerId: string) => `Open a session with POST /players/${playerId}/session and {"name": "…"}, then send this request again.`;

/** A listener posting without a display name. */
export const nameRequired = (playerId: string) =>
  new NameRequiredProblem(playerId, `Comments on a player are posted under a display name. ${openSession(playerId)}`);

/** A listener reacting without any player session, so with nothing to react as. */
export const sessionRequired = (playerId: string) =>
  new NameRequiredProblem(playerId, `A reaction counts once per person, and you have no player session to count it by. ${openSession(playerId)}`);
