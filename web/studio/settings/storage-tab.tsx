/** Settings, Storage: the bytes used against the quota (its operation is on its way into the API). */
export function StorageTab() {
  return (
    <section aria-labelledby="storage-heading">
      <h2 id="storage-heading">Storage</h2>
      <p class="meta">This server cannot tell the storage you use yet.</p>
    </section>
  );
}
