/**
 * The studio's frame: who is signed in (GET /me), the bar with the way to
 * each part and out, and the page the address names. A session that has
 * ended (a 401 from /me) goes to /signin, as the server sends a signed-out
 * visit there before drawing anything.
 */
import { useEffect, useState } from 'preact/hooks';
import { answer, type Studio, type User } from './api.ts';
import { AdminPage } from './admin/admin-page.tsx';
import { InboxCount, InboxPage } from './inbox/inbox-page.tsx';
import { LibraryPage } from './library.tsx';
import { ProjectPage } from './project/project-page.tsx';
import { SettingsPage } from './settings/settings-page.tsx';
import { LinkPage, LinksPage } from './share/links-page.tsx';
import { Link, routeOf, useLocation, type Route } from './router.tsx';
import { SessionContext } from './session.ts';

/** The page the route names; each page sets its own document title. */
function Page({ route }: { route: Route }) {
  switch (route.page) {
    case 'library':
      return <LibraryPage />;
    case 'project':
      return <ProjectPage projectid={route.projectid} />;
    case 'links':
      return <LinksPage />;
    case 'link':
      return <LinkPage playerid={route.playerid} />;
    case 'inbox':
      return <InboxPage />;
    case 'settings':
      return <SettingsPage />;
    case 'admin':
      return <AdminPage />;
    case 'not-found':
      return (
        <>
          <h1>Not found</h1>
          <p>Nothing in the studio has this address.</p>
        </>
      );
  }
}

function Bar({ route, user, studio }: { route: Route; user: User; studio: Studio }) {
  const b = studio.basePath;
  const current = (page: Route['page'] | Route['page'][]) => ([page].flat().includes(route.page) ? ('page' as const) : undefined);
  const signOut = async () => {
    await answer(studio.client.POST('/auth/signout'));
    window.location.assign(`${b}/signin`);
  };
  return (
    <header class="bar">
      <Link class="bar-brand" href={`${b}/`}>
        Audio Share
      </Link>
      <nav class="bar-nav" aria-label="Studio">
        <Link href={`${b}/`} aria-current={current(['library', 'project'])}>
          Library
        </Link>
        <Link href={`${b}/links`} aria-current={current(['links', 'link'])}>
          Links
        </Link>
        <Link href={`${b}/inbox`} aria-current={current('inbox')}>
          Inbox
          <InboxCount />
        </Link>
        <Link href={`${b}/settings`} aria-current={current('settings')}>
          Settings
        </Link>
        {user.admin ? (
          <Link href={`${b}/admin`} aria-current={current('admin')}>
            Admin
          </Link>
        ) : null}
      </nav>
      <span class="bar-user" title={user.email}>
        {user.name?.trim() || user.email}
      </span>
      <button type="button" class="secondary small" onClick={signOut}>
        Sign out
      </button>
    </header>
  );
}

export function App({ studio }: { studio: Studio }) {
  const location = useLocation();
  const [user, setUser] = useState<User | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const route = routeOf(location.pathname.slice(studio.basePath.length));

  useEffect(() => {
    void answer(studio.client.GET('/me')).then((me) => {
      if (me.ok) return setUser(me.data);
      if (me.refusal.status === 401) return window.location.assign(`${studio.basePath}/signin`);
      setFailure(me.refusal.detail);
    });
  }, [studio]);

  useEffect(() => {
    // data-state says when the page is drawn (tests, and the CSS that keeps the frame out of sight until then).
    document.getElementById('studio')!.dataset.state = user || failure ? 'ready' : 'loading';
  }, [user, failure]);

  if (failure) {
    return (
      <main id="main" class="wide">
        <h1>Audio Share</h1>
        <p role="alert" class="form-error">
          {failure}
        </p>
      </main>
    );
  }
  if (!user) return null;
  return (
    <SessionContext.Provider value={{ studio, user, setUser }}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <Bar route={route} user={user} studio={studio} />
      <main id="main" class="wide" tabIndex={-1}>
        <Page key={location.pathname} route={route} />
      </main>
    </SessionContext.Provider>
  );
}
