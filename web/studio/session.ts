/**
 * The signed-in account and the studio's API, for any page below the frame
 * (app.tsx provides them once GET /me has answered).
 */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Studio, User } from './api.ts';

export interface Session {
  studio: Studio;
  user: User;
  /** The account as an answer of the API has it now (after POST /me, say), for the bar and every page. */
  setUser: (user: User) => void;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside the studio frame');
  return session;
}
