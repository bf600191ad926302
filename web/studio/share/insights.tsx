/**
 * A player's listener insights (GET /players/{playerid}/insights, coming
 * with the insights operations).
 */
export function Insights({ playerid }: { playerid: string }) {
  return (
    <section aria-labelledby="insights-heading" data-playerid={playerid}>
      <h2 id="insights-heading">Listeners</h2>
      <p class="meta">Listener insights are not available on this server yet.</p>
    </section>
  );
}
