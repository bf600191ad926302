/**
 * Listings of a project's boxes, kept by project and box version. Every box
 * write bumps the version in the database (BoxRepository), and the version
 * is read with the access check on each request, so a listing is never
 * served once a write has landed, from this process or any other sharing
 * the database. The listing of a project at an older version is handed to
 * the computation of the new one, which may reuse what did not change.
 * Least recently used projects are forgotten first.
 */
export class BoxListCache<T> {
  private entries = new Map<string, { version: number; value: T }>();

  private capacity: number;

  constructor(capacity = 256) {
    this.capacity = capacity;
  }

  async get(projectId: string, version: number, compute: (previous: T | undefined) => Promise<T>): Promise<T> {
    const hit = this.entries.get(projectId);
    if (hit && hit.version === version) {
      // Map keeps insertion order: re-inserting marks the entry as recently used.
      this.entries.delete(projectId);
      this.entries.set(projectId, hit);
      return hit.value;
    }
    // The version was read before the boxes are, so the value is at least as new as it.
    const value = await compute(hit?.value);
    // Versions only go up: a listing that a slower request computed for an older version does not replace a newer one.
    const current = this.entries.get(projectId);
    if (current && current.version > version) return value;
    this.entries.delete(projectId);
    this.entries.set(projectId, { version, value });
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
    return value;
  }
}
