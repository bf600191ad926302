/**
 * The library at /: every project the account can open, its own and those
 * shared with it, each a link named by the project, with its artwork, size
 * and last change; a search over the names ("/" focuses it); and a new
 * project in two steps (New project, a name, Create).
 *
 * A large library opens at once: the first screen of projects (the most
 * recently changed, FIRST_PAGE of them) is one small request, drawn as soon
 * as it answers; the whole list follows, page by page, and replaces it.
 * The grid is drawn a window at a time (windowed-list.tsx); search and the
 * filters work on the list, so they find projects not drawn yet.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { allPages, type Answer, answer, early, nextCursor, type Project, type Studio } from './api.ts';
import { useSession } from './session.ts';
import { Link, navigate } from './router.tsx';
import { Dialog, FormEnd, FormError, formatBytes, formatTime } from './ui.tsx';
import { type Position, WindowedList } from './windowed-list.tsx';

type Filter = 'all' | 'mine' | 'shared';

/** The first request's projects: more than the tallest screen shows (six columns of four rows). */
const FIRST_PAGE = 48;
/** A card's height before one is measured, at the widest layout (the grid measures its rows once drawn). */
const CARD_ESTIMATE_PX = 250;

const FILTERS: Array<[Filter, string]> = [
  ['all', 'All'],
  ['mine', 'Mine'],
  ['shared', 'Shared with me'],
];

/**
 * Whether the project is one the account owns; every other role is a share. The library reads every project once
 * and filters here (the API's `filter` draws the same line), so switching filters costs no request.
 */
const isMine = (project: Project) => project.role === 'owner';

/** The library's first screen: the most recently changed projects, in the order it shows them; and whether more follow. */
export async function firstScreen(studio: Studio): Promise<{ first: Answer<Project[]>; more: boolean }> {
  let more = true;
  const first = await answer(
    studio.client.GET('/projects', { params: { query: { limit: FIRST_PAGE, sort: 'modified' } } }).then((result) => {
      more = nextCursor(result.response) !== undefined;
      return result;
    }),
  );
  return { first, more };
}

/**
 * The whole list in place of the first screen's. A project already drawn keeps its artwork's URL when the image
 * is the same (the same path: only the signature's expiry differs), so the browser does not fetch it again.
 */
function keepArtwork(shown: Project[], all: Project[]): Project[] {
  const before = new Map(shown.map((project) => [project.id, project]));
  const path = (url: string | undefined) => url?.split('?')[0];
  return all.map((project) => {
    const seen = before.get(project.id);
    return seen?.artwork && project.artwork && path(seen.artwork.url) === path(project.artwork.url) ? { ...project, artwork: seen.artwork } : project;
  });
}

function NewProject({ onClose }: { onClose: () => void }) {
  const { studio } = useSession();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const name = String(new FormData(event.currentTarget as HTMLFormElement).get('name') ?? '').trim();
    if (!name) return setError('Give the project a name.');
    setBusy(true);
    const made = await answer(studio.client.POST('/projects', { body: { name } }));
    setBusy(false);
    if (!made.ok) return setError(made.refusal.detail);
    navigate(`${studio.basePath}/projects/${encodeURIComponent(made.data.id)}`);
  };
  return (
    <form onSubmit={submit} noValidate>
      <div class="field">
        <label for="project-name">Project name</label>
        <input id="project-name" name="name" type="text" required maxLength={255} autoComplete="off" aria-invalid={error ? 'true' : undefined} aria-describedby="project-name-error" />
      </div>
      <FormEnd errorId="project-name-error" error={error} busy={busy} label="Create" onCancel={onClose} />
    </form>
  );
}

function ProjectCard({ project, position }: { project: Project; position: Position }) {
  const { studio } = useSession();
  return (
    <li class="project-card" {...position}>
      <div class="artwork" aria-hidden="true">
        {project.artwork ? <img src={project.artwork.url} alt="" loading="lazy" decoding="async" /> : <span class="artwork-blank" style={{ background: project.color }} />}
      </div>
      <h2 class="project-name">
        <Link href={`${studio.basePath}/projects/${encodeURIComponent(project.id)}`} class="stretched">
          {project.name}
        </Link>
      </h2>
      <p class="meta">
        <span>{formatBytes(project.size)}</span>
        <span>
          Changed <time dateTime={new Date(project.timeModified).toISOString()}>{formatTime(project.timeModified)}</time>
        </span>
        {isMine(project) ? null : <span class="tag">Shared · {project.role}</span>}
      </p>
    </li>
  );
}

export function LibraryPage() {
  const { studio } = useSession();
  const [projects, setProjects] = useState<Project[] | null>(null);
  /** The whole list has arrived (not only its first screen). */
  const [complete, setComplete] = useState(false);
  const [error, setError] = useState<string>();
  const [filter, setFilter] = useState<Filter>('all');
  const [query, setQuery] = useState('');
  const [creating, setCreating] = useState(false);
  const search = useRef<HTMLInputElement>(null);

  useEffect(() => {
    document.title = 'Library · Audio Share';
    let current = true;
    void (async () => {
      // The first screen: the most recently changed projects, in the order the library shows them.
      const { first, more } = await early(studio, 'library', () => firstScreen(studio));
      if (!current) return;
      if (!first.ok) return setError(first.refusal.detail);
      setProjects(first.data);
      if (!more) return setComplete(true);
      // Then all of it, in creation order: its pages neither miss nor repeat a project that changes meanwhile
      // (projects.yaml, listProjects `sort`), which the order by change cannot promise.
      const list = await allPages((cursor) => studio.client.GET('/projects', { params: { query: { limit: 1000, cursor } } }));
      if (!current) return;
      if (list.ok) setProjects(keepArtwork(first.data, list.data));
      else setError(list.refusal.detail);
      setComplete(true);
    })();
    return () => {
      current = false;
    };
  }, [studio]);

  // "/" focuses the search, as on most libraries; not while typing in a field.
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const target = event.target as HTMLElement;
      if (event.key !== '/' || event.ctrlKey || event.metaKey || event.altKey) return;
      if (target.closest('input, textarea, select, [contenteditable="true"], dialog')) return;
      event.preventDefault();
      search.current?.focus();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);

  const shown = useMemo(() => {
    const words = query.trim().toLocaleLowerCase().split(/\s+/).filter(Boolean);
    return (projects ?? [])
      .filter((project) => filter === 'all' || (filter === 'mine') === isMine(project))
      .filter((project) => words.every((word) => project.name.toLocaleLowerCase().includes(word)))
      // As the API's `sort=modified` orders the first page: by the last change, then by id.
      .sort((a, b) => b.timeModified - a.timeModified || (a.id < b.id ? -1 : 1));
  }, [projects, filter, query]);

  return (
    <>
      <div class="page-head">
        <h1>Library</h1>
        <button type="button" onClick={() => setCreating(true)}>
          New project
        </button>
      </div>
      <div class="toolbar">
        <fieldset class="chips">
          <legend class="visually-hidden">Show</legend>
          {FILTERS.map(([value, label]) => (
            <button key={value} type="button" class="chip" aria-pressed={filter === value} onClick={() => setFilter(value)}>
              {label}
            </button>
          ))}
        </fieldset>
        <input ref={search} type="search" class="search" aria-label="Search" placeholder="Search  /" value={query} onInput={(event) => setQuery(event.currentTarget.value)} />
      </div>
      <FormError id="library-error" message={error} />
      {projects === null ? (
        <p class="meta" aria-live="polite">
          Loading projects…
        </p>
      ) : shown.length === 0 && complete ? (
        <p class="empty">{projects.length === 0 ? 'No projects yet. Make one with New project, then drop your audio into it.' : 'No project matches.'}</p>
      ) : (
        <WindowedList
          items={shown}
          keyOf={(project) => project.id}
          render={(project, _index, position) => <ProjectCard project={project} position={position} />}
          estimate={CARD_ESTIMATE_PX}
          class="project-grid"
          aria-label="Projects"
          aria-busy={!complete}
        />
      )}
      {projects !== null && !complete ? (
        <p class="meta" aria-live="polite">
          Loading the rest of the library…
        </p>
      ) : null}
      <Dialog title="New project" open={creating} onClose={() => setCreating(false)}>
        <NewProject onClose={() => setCreating(false)} />
      </Dialog>
    </>
  );
}
