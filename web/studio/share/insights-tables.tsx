/**
 * A player's listener insights drawn as tables with proper headers (a
 * caption, column headers, each row headed by its track or listener), which
 * scroll inside their own box on a narrow screen rather than the page.
 */
import type { ComponentChildren } from 'preact';
import type { Schemas } from '../api.ts';
import { formatDuration, formatTime } from '../ui.tsx';

export type PlayerInsightsData = Schemas['PlayerInsights'];

const money = (cents: number, currency: string) => new Intl.NumberFormat(undefined, { style: 'currency', currency: currency.toUpperCase() }).format(cents / 100);
const percent = (fraction: number) => `${Math.round(fraction * 100)}%`;

/** A table in a box of its own that scrolls on a narrow screen: its caption, its column headers (numeric ones aligned right), its rows. */
function Table({ caption, columns, children }: { caption: string; columns: Array<[label: string, numeric?: boolean]>; children: ComponentChildren }) {
  return (
    <div class="table-box">
      <table class="insights">
        <caption>{caption}</caption>
        <thead>
          <tr>
            {columns.map(([label, numeric]) => (
              <th scope="col" class={numeric ? 'num' : undefined} key={label}>
                {label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

export function InsightsTables({ insights }: { insights: PlayerInsightsData }) {
  const { totals, tracks, listeners, purchases } = insights;
  const heard = tracks.flatMap((track) => track.listeners.map((listener) => ({ track, listener })));
  return (
    <>
      <dl class="totals" aria-label="Totals">
        <div>
          <dt>Plays</dt>
          <dd>{totals.plays}</dd>
        </div>
        <div>
          <dt>Listeners</dt>
          <dd>{totals.listeners}</dd>
        </div>
        <div>
          <dt>Downloads</dt>
          <dd>{totals.downloads}</dd>
        </div>
        <div>
          <dt>Purchases</dt>
          <dd>
            {totals.purchases}
            {totals.purchases ? <span class="meta"> · {money(purchases.amount, purchases.currency)}</span> : null}
          </dd>
        </div>
      </dl>
      {tracks.length === 0 ? (
        <p class="empty">Nobody has listened yet. A play counts once 3 seconds of a track are heard.</p>
      ) : (
        <>
          <Table caption="Plays per track" columns={[['Track'], ['Plays', true], ['Downloads', true], ['Listeners', true]]}>
            {tracks.map((track) => (
              <tr key={track.fileid}>
                <th scope="row">{track.name}</th>
                <td class="num">{track.plays}</td>
                <td class="num">{track.downloads}</td>
                <td class="num">{track.listeners.length}</td>
              </tr>
            ))}
          </Table>
          <Table caption="Plays per listener" columns={[['Listener'], ['Plays', true], ['Last played']]}>
            {listeners.map((listener) => (
              <tr key={listener.listenerid}>
                <th scope="row">{listener.anonymous ? 'Anonymous' : listener.name}</th>
                <td class="num">{listener.plays}</td>
                <td>{formatTime(listener.timeLastPlayed)}</td>
              </tr>
            ))}
          </Table>
          <Table caption="How far they listened" columns={[['Track'], ['Listener'], ['Plays', true], ['Farthest']]}>
            {heard.map(({ track, listener }) => (
              <tr key={`${track.fileid}:${listener.listenerid}`}>
                <th scope="row">{track.name}</th>
                <td>{listener.anonymous ? 'Anonymous' : listener.name}</td>
                <td class="num">{listener.plays}</td>
                <td>
                  <span class="progress-cell">
                    {listener.fraction !== undefined ? (
                      <meter min={0} max={1} value={listener.fraction} aria-label={`${percent(listener.fraction)} of ${track.name}`}>
                        {percent(listener.fraction)}
                      </meter>
                    ) : null}
                    {formatDuration(listener.farthest)}
                    {track.duration !== undefined ? ` of ${formatDuration(track.duration)}` : ''}
                    {listener.fraction !== undefined ? ` (${percent(listener.fraction)})` : ''}
                  </span>
                </td>
              </tr>
            ))}
          </Table>
        </>
      )}
    </>
  );
}
