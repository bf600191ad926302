/**
 * Settings, Storage: the bytes the account's projects keep against its
 * quota (GET /me/storage), as a meter, the same count an upload is
 * checked against.
 */
import { answer } from '../api.ts';
import { useSession } from '../session.ts';
import { FormError, formatBytes } from '../ui.tsx';
import { useLoaded } from './common.tsx';

export function StorageTab() {
  const { studio } = useSession();
  const storage = useLoaded(() => answer(studio.client.GET('/me/storage')));
  const usage = storage.data;
  const share = usage?.quota ? Math.min(1, usage.used / usage.quota) : 0;
  return (
    <section aria-labelledby="storage-heading">
      <h2 id="storage-heading">Storage</h2>
      <p class="hint">Your projects’ files (those in the trash too, until deleted) and artwork. Uploads past the quota are refused.</p>
      <FormError id="storage-error" message={storage.error} />
      {!usage ? (
        storage.error ? null : (
          <p class="meta">Loading…</p>
        )
      ) : usage.quota === null ? (
        <p id="storage-state">
          {formatBytes(usage.used)} used. This server sets you no quota.
        </p>
      ) : (
        <div class="storage">
          <meter id="storage-meter" min={0} max={usage.quota} value={usage.used} low={usage.quota * 0.8} high={usage.quota * 0.95} optimum={0} aria-labelledby="storage-state" />
          <p id="storage-state">
            {formatBytes(usage.used)} of {formatBytes(usage.quota)} used ({Math.round(share * 100)}%), {formatBytes(Math.max(0, usage.quota - usage.used))} free.
          </p>
        </div>
      )}
    </section>
  );
}
