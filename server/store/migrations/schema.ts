/**
 * The first schema, written once for both engines. `{BIGINT}` becomes
 * INTEGER on SQLite (64-bit already) and BIGINT on PostgreSQL; every other
 * type is spelled the same. Booleans are 0/1 integers, JSON is text.
 */
export function initialSchema(bigint: string): string {
  return `
CREATE TABLE users (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL UNIQUE,
  preferences TEXT NOT NULL DEFAULT '{"options":{}}',
  payment_provider TEXT,
  time_created ${bigint} NOT NULL
);

CREATE TABLE tokens (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  token_hash TEXT NOT NULL UNIQUE,
  label TEXT,
  time_created ${bigint} NOT NULL,
  time_revoked ${bigint}
);
CREATE INDEX tokens_user ON tokens(user_id);

CREATE TABLE projects (
  id TEXT PRIMARY KEY,
  owner_id TEXT NOT NULL REFERENCES users(id),
  name TEXT NOT NULL,
  color TEXT NOT NULL,
  sort_by TEXT,
  artwork_id TEXT,
  -- Bumped by every change to the project's boxes; keys the cache of box listings.
  box_version ${bigint} NOT NULL DEFAULT 0,
  time_created ${bigint} NOT NULL,
  time_modified ${bigint} NOT NULL
);
CREATE INDEX projects_owner ON projects(owner_id, time_created);

CREATE TABLE boxes (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('file', 'folder', 'stack')),
  name TEXT NOT NULL,
  color TEXT NOT NULL,
  parent_id TEXT REFERENCES boxes(id) ON DELETE SET NULL,
  position ${bigint} NOT NULL DEFAULT 0,
  trashed INTEGER NOT NULL DEFAULT 0,
  hidden INTEGER NOT NULL DEFAULT 0,
  version_name TEXT,
  status TEXT,
  status_reason TEXT,
  size ${bigint},
  mime_type TEXT,
  duration DOUBLE PRECISION,
  uploader_id TEXT REFERENCES users(id),
  time_created ${bigint} NOT NULL,
  time_modified ${bigint} NOT NULL
);
CREATE INDEX boxes_project ON boxes(project_id, kind, time_created);
CREATE INDEX boxes_parent ON boxes(parent_id, position);

CREATE TABLE artworks (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  content_type TEXT NOT NULL,
  size ${bigint} NOT NULL,
  time_created ${bigint} NOT NULL
);

CREATE TABLE uploads (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('file', 'artwork')),
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  user_id TEXT NOT NULL REFERENCES users(id),
  object_id TEXT NOT NULL,
  name TEXT NOT NULL,
  content_type TEXT NOT NULL,
  size ${bigint} NOT NULL,
  metadata TEXT NOT NULL,
  expires ${bigint} NOT NULL,
  time_created ${bigint} NOT NULL,
  time_started ${bigint},
  time_completed ${bigint}
);

CREATE TABLE players (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  owner_id TEXT NOT NULL REFERENCES users(id),
  name TEXT NOT NULL,
  color TEXT NOT NULL,
  public INTEGER NOT NULL,
  folder_id TEXT,
  box_ids TEXT,
  options TEXT NOT NULL,
  upload TEXT,
  payment TEXT,
  time_created ${bigint} NOT NULL,
  time_modified ${bigint} NOT NULL
);
CREATE INDEX players_owner ON players(owner_id, time_created);
CREATE INDEX players_project ON players(project_id);

CREATE TABLE player_collaborators (
  player_id TEXT NOT NULL REFERENCES players(id) ON DELETE CASCADE,
  email TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('admin', 'editor', 'viewer')),
  position INTEGER NOT NULL,
  PRIMARY KEY (player_id, email)
);
CREATE INDEX player_collaborators_email ON player_collaborators(email);
`;
}
