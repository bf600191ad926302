/**
 * The library at /: every project the account can open, its own and those
 * shared with it, each a link named by the project, with its artwork, size
 * and last change; a search over the names ("/" focuses it); and a new
 * project in two steps (New project, a name, Create).
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { allPages, answer, type Project } from './api.ts';
import { useSession } from './session.ts';
import { Link, navigate } from './router.tsx';
import { Dialog, FormEnd, FormError, formatBytes, formatTime } from './ui.tsx';

type Filter = 'all' | 'mine' | 'shared';

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

function ProjectCard({ project }: { project: Project }) {
  const { studio } = useSession();
  return (
    <li class="project-card">
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
  const [error, setError] = useState<string>();
  const [filter, setFilter] = useState<Filter>('all');
  const [query, setQuery] = useState('');
  const [creating, setCreating] = useState(false);
  const search = useRef<HTMLInputElement>(null);

  useEffect(() => {
    document.title = 'Library · Audio Share';
    void allPages((cursor) => studio.client.GET('/projects', { params: { query: { limit: 1000, cursor } } })).then((list) => {
      if (list.ok) setProjects(list.data);
      else setError(list.refusal.detail);
    });
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
      .sort((a, b) => b.timeModified - a.timeModified);
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
      ) : shown.length === 0 ? (
        <p class="empty">{projects.length === 0 ? 'No projects yet. Make one with New project, then drop your audio into it.' : 'No project matches.'}</p>
      ) : (
        <ul class="project-grid" aria-label="Projects">
          {shown.map((project) => (
            <ProjectCard key={project.id} project={project} />
          ))}
        </ul>
      )}
      <Dialog title="New project" open={creating} onClose={() => setCreating(false)}>
        <NewProject onClose={() => setCreating(false)} />
      </Dialog>
    </>
  );
}
