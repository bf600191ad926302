/**
 * Settings, Player defaults: what a new player gets for each option the
 * Share dialog leaves as it is (GET/POST /me/preferences). Each control
 * shows the value a player will get: the stored preference, else the final
 * default (PlayerOptionsInput in the spec). Saving stores a preference only
 * for what differs from the final default or was stored already, so an
 * untouched option keeps following the server's default.
 */
import { useState } from 'preact/hooks';
import { answer, type Schemas } from '../api.ts';
import { useSession } from '../session.ts';
import { FormEnd, FormError } from '../ui.tsx';
import { useLoaded } from './common.tsx';

type Preferences = Schemas['PlayerPreferences'];
type Update = Schemas['UpdatePlayerPreferencesRequest'];
type BooleanOption = 'downloads' | 'comments' | 'stacks' | 'loudnessMatch' | 'metadata' | 'isrc' | 'serviceCTA';

/** The final defaults, as the spec's PlayerOptionsInput states them. */
const FINAL: Record<BooleanOption, boolean> = { downloads: true, comments: true, stacks: false, loudnessMatch: false, metadata: false, isrc: false, serviceCTA: true };

const SWITCHES: Array<[BooleanOption, string, string]> = [
  ['downloads', 'Downloads', 'Listeners can download the files.'],
  ['comments', 'Comments', 'Listeners can comment on the tracks.'],
  ['stacks', 'All versions', 'Every version of a stack, to switch between; otherwise only the newest.'],
  ['loudnessMatch', 'Loudness match', 'Play every track at the loudness of a streaming platform.'],
  ['metadata', 'Show metadata', 'The files’ format, length and loudness.'],
  ['isrc', 'Show ISRC', 'The tracks’ recording codes.'],
  ['serviceCTA', 'Download notice', 'A note after a download, pointing to the artist’s links.'],
];

const PLATFORMS: Array<[string, string]> = [
  ['spotify', 'Spotify'],
  ['apple-music', 'Apple Music'],
  ['youtube', 'YouTube'],
  ['tidal', 'TIDAL'],
  ['amazon-music', 'Amazon Music'],
  ['deezer', 'Deezer'],
];

function DefaultsForm({ stored }: { stored: Preferences }) {
  const { studio } = useSession();
  const [error, setError] = useState<string>();
  const [done, setDone] = useState('');
  const [busy, setBusy] = useState(false);
  const [loudness, setLoudness] = useState(stored.options.loudnessMatch ?? FINAL.loudnessMatch);
  const options = stored.options;
  const submit = async (event: Event) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget as HTMLFormElement);
    const body: Update = { options: {} };
    const audience = data.get('public') === 'true';
    if (stored.public !== undefined || !audience) body.public = audience;
    for (const [key] of SWITCHES) {
      const on = data.get(key) === 'on';
      // Only what differs from the final default, or was a preference already: the rest keeps following the server.
      if (options[key] !== undefined || on !== FINAL[key]) body.options![key] = on;
    }
    const platform = String(data.get('loudnessPlatform') ?? '');
    if (platform || options.loudnessPlatform) body.options!.loudnessPlatform = (platform || null) as Schemas['LoudnessPlatform'] | null;
    const quality = String(data.get('quality') ?? '');
    if (quality || options.quality) body.options!.quality = (quality || null) as Schemas['Quality'] | null;
    const subtitle = String(data.get('boxSubtitle') ?? 'artist');
    if (options.boxSubtitle !== undefined || subtitle !== 'artist') body.options!.boxSubtitle = subtitle as Schemas['BoxSubtitle'];
    setBusy(true);
    setDone('');
    const saved = await answer(studio.client.POST('/me/preferences', { body }));
    setBusy(false);
    if (!saved.ok) return setError(saved.refusal.detail);
    setError(undefined);
    setDone('Saved. New players start with these.');
  };
  return (
    <form id="defaults-form" noValidate onSubmit={submit} class="defaults">
      <div role="radiogroup" aria-labelledby="default-audience" class="group">
        <p id="default-audience" class="group-label">
          Who can open it
        </p>
        <label class="check">
          <input type="radio" name="public" value="true" defaultChecked={stored.public !== false} /> Anyone with the link
        </label>
        <label class="check">
          <input type="radio" name="public" value="false" defaultChecked={stored.public === false} /> Only people I invite
        </label>
      </div>
      <fieldset>
        <legend>Options</legend>
        {SWITCHES.map(([key, label, hint]) => (
          <div key={key} class="option">
            <label class="check">
              <input
                type="checkbox"
                name={key}
                defaultChecked={options[key] ?? FINAL[key]}
                aria-describedby={`default-${key}-hint`}
                onChange={key === 'loudnessMatch' ? (event) => setLoudness(event.currentTarget.checked) : undefined}
              />{' '}
              {label}
            </label>
            <p class="hint" id={`default-${key}-hint`}>
              {hint}
            </p>
          </div>
        ))}
        <div class="field">
          <label for="default-platform">Loudness platform</label>
          <select id="default-platform" name="loudnessPlatform" defaultValue={options.loudnessPlatform ?? ''} disabled={!loudness}>
            <option value="">The server’s target</option>
            {PLATFORMS.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="default-quality">Quality</label>
          <select id="default-quality" name="quality" defaultValue={options.quality ?? ''}>
            <option value="">Automatic (the best the connection allows)</option>
            <option value="original">Original</option>
            <option value="lossless">Lossless</option>
            <option value="compressed">Compressed</option>
          </select>
        </div>
        <div class="field">
          <label for="default-subtitle">Subtitle</label>
          <select id="default-subtitle" name="boxSubtitle" defaultValue={options.boxSubtitle ?? 'artist'}>
            <option value="artist">Artist</option>
            <option value="timestamp">Date</option>
            <option value="none">None</option>
          </select>
        </div>
      </fieldset>
      <FormEnd errorId="defaults-form-error" error={error} done={done} busy={busy} label="Save defaults" />
    </form>
  );
}

export function DefaultsTab() {
  const { studio } = useSession();
  const preferences = useLoaded(() => answer(studio.client.GET('/me/preferences')));
  return (
    <section aria-labelledby="defaults-heading">
      <h2 id="defaults-heading">Player defaults</h2>
      <p class="hint">What a new player starts with. The Share dialog can change any of them for one player.</p>
      <FormError id="defaults-error" message={preferences.error} />
      {preferences.data ? <DefaultsForm stored={preferences.data} /> : preferences.error ? null : <p class="meta">Loading…</p>}
    </section>
  );
}
