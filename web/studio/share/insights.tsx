/**
 * A player's listener insights (GET /players/{playerid}/insights): totals,
 * plays per track and per listener (their display name, or "Anonymous"),
 * how far they listened, downloads and purchases. What the player page
 * reported and the server served, nothing else (no address, fingerprint or
 * third party).
 */
import { useEffect, useState } from 'preact/hooks';
import { answer } from '../api.ts';
import { useSession } from '../session.ts';
import { FormError } from '../ui.tsx';
import { InsightsTables, type PlayerInsightsData } from './insights-tables.tsx';

export function Insights({ playerid }: { playerid: string }) {
  const { studio } = useSession();
  const [insights, setInsights] = useState<PlayerInsightsData | null>(null);
  const [error, setError] = useState<string>();
  const [asked, setAsked] = useState(0);

  useEffect(() => {
    let live = true;
    void answer(studio.client.GET('/players/{playerid}/insights', { params: { path: { playerid } } })).then((got) => {
      if (!live) return;
      if (got.ok) {
        setInsights(got.data);
        setError(undefined);
      } else setError(got.refusal.detail);
    });
    return () => {
      live = false;
    };
  }, [studio, playerid, asked]);

  return (
    <section aria-labelledby="insights-heading" class="insights-section">
      <div class="page-head">
        <h2 id="insights-heading">Listeners</h2>
        <button type="button" class="secondary small" onClick={() => setAsked((n) => n + 1)}>
          Refresh
        </button>
      </div>
      <FormError id="insights-error" message={error} />
      {insights ? (
        <InsightsTables insights={insights} />
      ) : error ? null : (
        <p class="meta" aria-live="polite">
          Loading…
        </p>
      )}
    </section>
  );
}
