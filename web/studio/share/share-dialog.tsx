/**
 * The Share dialog: makes a player of a project, a folder or a selection
 * (`folderid` or `boxids`), or edits an existing one (`player`). (Being built.)
 */
import type { Player } from '../api.ts';

export interface ShareTarget {
  projectid: string;
  /** The player is scoped to this folder. */
  folderid?: string;
  /** The player is scoped to these boxes. */
  boxids?: string[];
}

export function ShareDialog(_props: { target?: ShareTarget; player?: Player; open: boolean; onClose: (saved?: Player) => void }) {
  return null;
}
