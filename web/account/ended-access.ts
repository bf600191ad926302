/**
 * What a new password ended, in words (the answer of a reset through a
 * mailed link, and of a change of password, `EndedAccess`): "Signed out
 * everywhere; 2 tokens, 1 passkey and 1 connected app were ended." A change
 * keeps the session that made it, so it signs out everywhere else.
 */
import type { Schemas } from '../../generated/client.ts';

const counted = (count: number, one: string) => `${count} ${one}${count === 1 ? '' : 's'}`;

/** A list in words: "a", "a and b", "a, b and c". */
const listed = (items: string[]) => (items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`);

export function endedAccessInWords(ended: Schemas['EndedAccess'], { keptThisSession = false }: { keptThisSession?: boolean } = {}): string {
  const signedOut = keptThisSession ? 'Signed out everywhere else' : 'Signed out everywhere';
  const others = [
    ...(ended.tokens > 0 ? [counted(ended.tokens, 'token')] : []),
    ...(ended.passkeys > 0 ? [counted(ended.passkeys, 'passkey')] : []),
    ...(ended.apps > 0 ? [counted(ended.apps, 'connected app')] : []),
  ];
  if (others.length === 0) return `${signedOut}.`;
  const total = ended.tokens + ended.passkeys + ended.apps;
  return `${signedOut}; ${listed(others)} ${total === 1 ? 'was' : 'were'} ended.`;
}
