/**
 * The tracks of listeners' views, signed URLs included, kept as the JSON the
 * view sends. A view of 200 tracks of 2 versions holds 2,400 signed URLs
 * (one HMAC each) and 700 KiB of JSON: made once, they are shared by every
 * listener the player shows the same tracks with the same grant, instead of
 * being signed and serialised again for each of them (issue 23).
 *
 * What decides the tracks is all in the key, each part read anew on every
 * request, from the database, before the boxes are read on a miss:
 * - the player and its version (its scope, its options: stacks, metadata,
 *   isrc, boxSubtitle; its payment, password and expiry, which bump it too);
 * - its project's box_version, which every box write bumps
 *   (box-repository.ts), in this process or any other on the database;
 * - what the listener may do there (the qualities streamed, downloads) and
 *   the grant its URLs carry (who the listener was taken for, the purchase).
 * So an entry is never served once any of them has changed, and never to
 * another player or another grant. The uploaders' display names (the
 * `artist` subtitle of files without an artist tag) have no version: the
 * entry records those it used, and a request reads them again and misses
 * when one differs.
 *
 * The one bound on staleness is time: the entry's URLs expire at the
 * `urlsExpire` they were signed with. An entry is used for at most
 * reuseWindowMs(ttl) after it was made (a minute of the default hour), so a
 * view answered from it has URLs that expire between ttl minus that window
 * and ttl from now: "by default an hour from now" (views.yaml), never later
 * than a fresh view's would. Each URL still has the player's rules checked
 * on every use (player-grants.ts), whatever view it came from.
 */

/** What an entry was made from that has no version: the display names of the uploaders its subtitles consulted. */
export type UploaderNames = ReadonlyArray<readonly [userId: string, name: string | undefined]>;

export interface TracksEntry {
  /** The view's `tracks`, as JSON in UTF-8: sent as they are, with no string to encode again. */
  json: Buffer;
  /** When its URLs expire (the view's `urlsExpire`). */
  urlsExpire: number;
  /** When it was made (the server's clock). */
  madeAt: number;
  uploaderNames: UploaderNames;
}

/** How long an entry serves views: 1/60 of the URLs' lifetime, at most a minute. */
export const reuseWindowMs = (urlTtlMs: number) => Math.min(60_000, Math.floor(urlTtlMs / 60));

/** 32 MiB: about 45 views of 200 tracks, the busiest players' and grants'. */
const DEFAULT_BUDGET_BYTES = 32 * 1024 * 1024;

export class ViewTracksCache {
  /** In order of use, least recent first (a Map keeps insertion order). */
  private entries = new Map<string, TracksEntry>();
  private bytes = 0;
  private readonly budgetBytes: number;

  constructor(budgetBytes = DEFAULT_BUDGET_BYTES) {
    this.budgetBytes = budgetBytes;
  }

  /** Entries being made, by key: listeners who ask meanwhile wait for the same one instead of making it again. */
  private making = new Map<string, Promise<TracksEntry>>();

  /**
   * The entry under `key`, when it may still serve a view at `now` and
   * `stillTrue` says what it was made from without a version holds; else
   * the one being made for the key, else a new one from `make`, kept.
   */
  async obtain(key: string, now: number, urlTtlMs: number, stillTrue: (entry: TracksEntry) => Promise<boolean>, make: () => Promise<TracksEntry>): Promise<TracksEntry> {
    const kept = this.get(key, now, urlTtlMs);
    if (kept && (await stillTrue(kept))) return kept;
    const pending = this.making.get(key);
    if (pending) return pending;
    const made = make().finally(() => this.making.delete(key));
    this.making.set(key, made);
    const entry = await made;
    this.set(key, entry);
    return entry;
  }

  /** The entry under `key` while it may still serve a view at `now`; an older one is dropped. */
  get(key: string, now: number, urlTtlMs: number): TracksEntry | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.drop(key);
    // A clock that went back (tests set it) is no reason to trust an entry from "the future".
    if (now < entry.madeAt || now - entry.madeAt >= reuseWindowMs(urlTtlMs)) return undefined;
    this.entries.set(key, entry);
    this.bytes += entry.json.byteLength;
    return entry;
  }

  set(key: string, entry: TracksEntry): void {
    this.drop(key);
    // A view larger than the whole budget is not kept: it would push out every other.
    if (entry.json.byteLength > this.budgetBytes) return;
    this.entries.set(key, entry);
    this.bytes += entry.json.byteLength;
    for (const [oldest, old] of this.entries) {
      if (this.bytes <= this.budgetBytes) break;
      this.entries.delete(oldest);
      this.bytes -= old.json.byteLength;
    }
  }

  /** How many entries are kept (for tests). */
  get size(): number {
    return this.entries.size;
  }

  private drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bytes -= entry.json.byteLength;
  }
}

const caches = new WeakMap<object, ViewTracksCache>();

/**
 * The cache of one server's views. Keyed by its configuration, which holds
 * what the URLs are made with (public URL, signing secret, lifetime), so two
 * servers in one process (as tests run them) never share entries.
 */
export function viewTracksCache(config: object): ViewTracksCache {
  let cache = caches.get(config);
  if (!cache) caches.set(config, (cache = new ViewTracksCache()));
  return cache;
}
