/**
 * /links: every player of the account (GET /players, page after page), each
 * with its scope (the project, a folder of it, or a selection of its boxes,
 * by name) and its main options, to edit in the Share dialog (Save) or
 * delete (after a confirmation). /links/{playerid}: one player, its link
 * and embed code, and its listeners' insights.
 */
import { useEffect, useState } from 'preact/hooks';
import { allPages, answer, type Box, type Player, type Project } from '../api.ts';
import { useSession } from '../session.ts';
import { Link } from '../router.tsx';
import { ConfirmDelete, FormError, formatTime } from '../ui.tsx';
import { LinkBox, ShareDialog, type ShareTarget } from './share-dialog.tsx';
import { Insights } from './insights.tsx';
import { PLATFORMS, QUALITIES } from './share-form.ts';
import './share.css';

const label = <T extends string>(choices: Array<[T, string]>, value: T | undefined) => choices.find(([choice]) => choice === value)?.[1] ?? value;

/** The player's main options, as short words. */
export function optionWords(player: Player): string[] {
  const o = player.options;
  const words = [player.public ? 'Anyone with the link' : 'Only people invited'];
  if (player.hasPassword) words.push('Password');
  if (player.expires !== undefined) words.push(`${player.expires <= Date.now() ? 'Expired' : 'Expires'} ${formatTime(player.expires)}`);
  if (o.downloads) words.push('Downloads');
  if (o.comments) words.push('Comments');
  if (o.stacks) words.push('All versions');
  if (o.loudnessMatch) words.push(o.loudnessPlatform ? `Loudness match (${label(PLATFORMS, o.loudnessPlatform)})` : 'Loudness match');
  if (o.quality) words.push(`Quality: ${label(QUALITIES, o.quality)}`);
  if (o.metadata) words.push('Metadata');
  if (o.isrc) words.push('ISRC');
  if (player.payment) words.push(`Paywall $${(player.payment.price / 100).toFixed(2)}`);
  if (player.upload?.enabled) words.push('Upload portal');
  if (player.collaborators?.length) words.push(`${player.collaborators.length} invited`);
  return words;
}

/** Names of a project's boxes, for the scopes of its players. */
type BoxNames = Map<string, string>;

/** Where the player opens: the project, a folder of it, or a selection. */
export function scopeOf(player: Player, projects: Map<string, Project>, boxes: Map<string, BoxNames>): string {
  const project = projects.get(player.projectid)?.name ?? 'a project';
  const names = boxes.get(player.projectid);
  if (player.folderid) return `Folder ${names?.get(player.folderid) ?? '…'} in ${project}`;
  if (player.boxids?.length) {
    const shown = player.boxids.slice(0, 3).map((id) => names?.get(id) ?? '…');
    const more = player.boxids.length > 3 ? ` and ${player.boxids.length - 3} more` : '';
    return `${player.boxids.length === 1 ? 'File' : `${player.boxids.length} files`}: ${shown.join(', ')}${more} in ${project}`;
  }
  return `All of ${project}`;
}

/** The names of the boxes of every project that has a scoped player (one listing per project). */
async function boxNamesOf(studio: ReturnType<typeof useSession>['studio'], players: Player[]): Promise<Map<string, BoxNames>> {
  const wanted = [...new Set(players.filter((player) => player.folderid || player.boxids?.length).map((player) => player.projectid))];
  const lists = await Promise.all(
    wanted.map((projectid) => allPages<Box>((cursor) => studio.client.GET('/projects/{projectid}/all', { params: { path: { projectid }, query: { limit: 100, cursor } } }))),
  );
  const names = new Map<string, BoxNames>();
  lists.forEach((list, index) => {
    if (list.ok) names.set(wanted[index], new Map(list.data.map((box) => [box.id, box.name])));
  });
  return names;
}

function DeleteDialog({ player, onClose }: { player: Player | null; onClose: (deleted: boolean) => void }) {
  const { studio } = useSession();
  return (
    <ConfirmDelete title="Delete link" open={!!player} errorId="delete-error" remove={() => answer(studio.client.DELETE('/players/{playerid}', { params: { path: { playerid: player!.id } } }))} onClose={onClose}>
      <p>
        Delete <strong>{player?.name}</strong>? Its link stops opening at once, for everyone, and the people it invited lose the access it gave them. The project and its files
        stay.
      </p>
    </ConfirmDelete>
  );
}

function LinkCard({ player, scope, onEdit, onDelete }: { player: Player; scope: string; onEdit: () => void; onDelete: () => void }) {
  const { studio } = useSession();
  return (
    <li class="link-card" aria-label={player.name}>
      <h2>
        <Link href={`${studio.basePath}/links/${encodeURIComponent(player.id)}`}>{player.name}</Link>
      </h2>
      <p class="meta">{scope}</p>
      <p class="link-url">{player.playerUrl}</p>
      <ul class="link-options" aria-label="Options">
        {optionWords(player).map((word) => (
          <li key={word} class="tag">
            {word}
          </li>
        ))}
      </ul>
      <div class="link-actions">
        {/* The server says whether this caller may change the player (abilities.write), not their role. */}
        {player.abilities.write ? (
          <>
            <button type="button" class="secondary small" onClick={onEdit}>
              Edit
            </button>
            <button type="button" class="secondary small" onClick={onDelete}>
              Delete
            </button>
          </>
        ) : null}
        <span class="meta">Made {formatTime(player.timeCreated)}</span>
      </div>
    </li>
  );
}

export function LinksPage() {
  const { studio } = useSession();
  const [players, setPlayers] = useState<Player[] | null>(null);
  const [projects, setProjects] = useState(new Map<string, Project>());
  const [boxes, setBoxes] = useState(new Map<string, BoxNames>());
  const [error, setError] = useState<string>();
  const [share, setShare] = useState<{ player?: Player; target?: ShareTarget } | null>(null);
  const [deleting, setDeleting] = useState<Player | null>(null);
  const [status, setStatus] = useState('');
  const [chosen, setChosen] = useState('');
  // The projects a new link can be made on: those the server says the account may write (abilities.write), its own and
  // those it was invited to as admin or editor.
  const writable = [...projects.values()].filter((project) => project.abilities.write).sort((a, b) => a.name.localeCompare(b.name));

  useEffect(() => {
    document.title = 'Links · Audio Share';
    let live = true;
    void (async () => {
      const [list, projectList] = await Promise.all([
        allPages<Player>((cursor) => studio.client.GET('/players', { params: { query: { limit: 100, cursor } } })),
        allPages<Project>((cursor) => studio.client.GET('/projects', { params: { query: { limit: 1000, cursor } } })),
      ]);
      if (!live) return;
      if (!list.ok) return setError(list.refusal.detail);
      if (projectList.ok) setProjects(new Map(projectList.data.map((project) => [project.id, project])));
      setPlayers(list.data);
      const names = await boxNamesOf(studio, list.data);
      if (live) setBoxes(names);
    })();
    return () => {
      live = false;
    };
  }, [studio]);

  return (
    <>
      <div class="page-head">
        <h1>Links</h1>
        {writable.length ? (
          <div class="new-link">
            <label for="new-link-project" class="visually-hidden">
              Project
            </label>
            <select id="new-link-project" value={chosen || writable[0].id} onChange={(event) => setChosen(event.currentTarget.value)}>
              {writable.map((project) => (
                <option key={project.id} value={project.id}>
                  {project.name}
                </option>
              ))}
            </select>
            <button type="button" onClick={() => setShare({ target: { projectid: chosen || writable[0].id } })}>
              New link
            </button>
          </div>
        ) : null}
      </div>
      <p class="meta">Every player of your projects. Share a project, a folder or a selection from its page to make one.</p>
      <FormError id="links-error" message={error} />
      <p class="form-done" role="status">
        {status}
      </p>
      {players === null ? (
        error ? null : (
          <p class="meta" aria-live="polite">
            Loading links…
          </p>
        )
      ) : players.length === 0 ? (
        <p class="empty">No links yet. Open a project and choose Share.</p>
      ) : (
        <ul class="links" aria-label="Links">
          {players.map((player) => (
            <LinkCard key={player.id} player={player} scope={scopeOf(player, projects, boxes)} onEdit={() => setShare({ player })} onDelete={() => setDeleting(player)} />
          ))}
        </ul>
      )}
      <ShareDialog
        player={share?.player}
        target={share?.target}
        open={!!share}
        onClose={(saved) => {
          if (saved) {
            const known = players?.some((one) => one.id === saved.id);
            setPlayers((before) => [saved, ...(before ?? []).filter((one) => one.id !== saved.id)].sort((a, b) => b.timeCreated - a.timeCreated));
            setStatus(`${known ? 'Saved' : 'Made'} ${saved.name}.`);
          }
          setShare(null);
        }}
      />
      <DeleteDialog
        player={deleting}
        onClose={(deleted) => {
          if (deleted && deleting) {
            const gone = deleting;
            setPlayers((before) => (before ?? []).filter((one) => one.id !== gone.id));
            setStatus(`Deleted ${gone.name}.`);
          }
          setDeleting(null);
        }}
      />
    </>
  );
}

export function LinkPage({ playerid }: { playerid: string }) {
  const { studio } = useSession();
  const [player, setPlayer] = useState<Player | null>(null);
  const [scope, setScope] = useState('');
  const [error, setError] = useState<string>();
  const [editing, setEditing] = useState(false);

  useEffect(() => {
    let live = true;
    document.title = 'Link · Audio Share';
    void (async () => {
      const got = await answer(studio.client.GET('/players/{playerid}', { params: { path: { playerid } } }));
      if (!live) return;
      if (!got.ok) return setError(got.refusal.detail);
      setPlayer(got.data);
      document.title = `${got.data.name} · Links · Audio Share`;
      const [project, names] = await Promise.all([answer(studio.client.GET('/projects/{projectid}', { params: { path: { projectid: got.data.projectid } } })), boxNamesOf(studio, [got.data])]);
      if (live) setScope(scopeOf(got.data, new Map(project.ok ? [[project.data.id, project.data]] : []), names));
    })();
    return () => {
      live = false;
    };
  }, [studio, playerid]);

  if (error) {
    return (
      <>
        <h1>Link</h1>
        <FormError id="link-error" message={error} />
        <p>
          <Link href={`${studio.basePath}/links`}>All links</Link>
        </p>
      </>
    );
  }
  if (!player) {
    return (
      <p class="meta" aria-live="polite">
        Loading…
      </p>
    );
  }
  return (
    <>
      <p class="meta">
        <Link href={`${studio.basePath}/links`}>Links</Link> ›
      </p>
      <div class="page-head">
        <h1>{player.name}</h1>
        {player.abilities.write ? (
          <button type="button" class="secondary" onClick={() => setEditing(true)}>
            Edit
          </button>
        ) : null}
      </div>
      <p class="meta">{scope}</p>
      <ul class="link-options" aria-label="Options">
        {optionWords(player).map((word) => (
          <li key={word} class="tag">
            {word}
          </li>
        ))}
      </ul>
      <LinkBox player={player} />
      {/* Insights are for those who manage the player (the API answers a viewer 403). */}
      {player.abilities.write ? <Insights playerid={player.id} /> : null}
      <ShareDialog
        player={player}
        open={editing}
        onClose={(saved) => {
          if (saved) setPlayer(saved);
          setEditing(false);
          if (saved === undefined) return;
          // A renamed player's heading and title follow.
          document.title = `${saved.name} · Links · Audio Share`;
        }}
      />
    </>
  );
}
