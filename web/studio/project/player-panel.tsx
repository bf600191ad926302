/**
 * The project's player: the file a row's Play button chose, with its
 * waveform, on the player page's own modules (web/player/engine.ts for the
 * one audio element and its Web Audio path, waveform.ts for Peaks.js over
 * the server's peaks). A stack of several versions gets the player page's
 * A/B switch: a radiogroup "Version" whose choice plays the same moment of
 * the other version, playing on if it was playing (player-app.ts,
 * switchVersion).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { AudioEngine } from '../../player/engine.ts';
import { Waveform } from '../../player/waveform.ts';
import { answer, type FileBox } from '../api.ts';
import { useSession } from '../session.ts';
import { formatDuration } from '../ui.tsx';

export interface Playing {
  /** The file to play. */
  file: FileBox;
  /** The versions of its stack, oldest first (the file alone when it has no other). */
  versions: FileBox[];
  /** Where to start, in seconds (a deep link's `t`). */
  time: number;
  /** Start at once (a click on Play), or wait for the Play button (a deep link: autoplay is blocked anyway). */
  play: boolean;
  /** Changes with each click, so the same file chosen again starts again. */
  seq: number;
}

const level = (value: number, unit: string) => `${value.toFixed(1)} ${unit}`;

export function PlayerPanel({ projectid, playing, title }: { projectid: string; playing: Playing; title: string }) {
  const { studio } = useSession();
  const audioRef = useRef<HTMLAudioElement>(null);
  const waveRef = useRef<HTMLDivElement>(null);
  const engine = useRef<AudioEngine>();
  const waveform = useRef<Waveform>();
  const [current, setCurrent] = useState<FileBox>(playing.file);
  const [time, setTime] = useState(playing.time);
  const [duration, setDuration] = useState(playing.file.duration ?? 0);
  const [isPlaying, setIsPlaying] = useState(false);
  const [error, setError] = useState<string>();
  const currentRef = useRef(current);
  currentRef.current = current;

  // One engine for the page's life, on its one <audio id="audio">.
  useEffect(() => {
    const audio = audioRef.current!;
    const made = new AudioEngine(audio);
    engine.current = made;
    const onTime = (event: Event) => {
      setTime(made.currentTime);
      if (Number.isFinite(audio.duration)) setDuration(audio.duration);
      const kind = event.type as 'timeupdate' | 'seeked' | 'playing' | 'pause' | 'ended' | 'canplay';
      waveform.current?.update(kind, audio.currentTime);
      setIsPlaying(made.playing);
    };
    const events = ['timeupdate', 'seeked', 'playing', 'pause', 'ended', 'canplay', 'durationchange', 'play'];
    for (const event of events) audio.addEventListener(event, onTime);
    return () => {
      for (const event of events) audio.removeEventListener(event, onTime);
      made.unload();
      waveform.current?.destroy();
    };
  }, []);

  /** Points the audio at `file`, at `at` seconds, and draws its waveform. */
  const load = async (file: FileBox, at: number, play: boolean) => {
    setError(undefined);
    setCurrent(file);
    const path = { projectid, fileid: file.id };
    const download = await answer(studio.client.GET('/projects/{projectid}/files/{fileid}/download', { params: { path } }));
    if (currentRef.current.id !== file.id) return;
    if (!download.ok) return setError(download.refusal.detail);
    // The engine seeks to `at` once the metadata is in, and plays on from there when asked (engine.ts, restore).
    engine.current!.load({ url: download.data.url, labels: { versionId: file.id } }, { time: at, play });
    setTime(at);
    setDuration(file.duration ?? 0);
    const box = waveRef.current!;
    waveform.current?.destroy();
    waveform.current = undefined;
    delete box.dataset.drawn;
    if (!file.audio) return;
    const peaks = await answer(studio.client.GET('/projects/{projectid}/files/{fileid}/peaks', { params: { path, query: { format: 'dat' } } }));
    if (!peaks.ok || currentRef.current.id !== file.id) return;
    const styles = getComputedStyle(document.documentElement);
    const color = (name: string, fallback: string) => styles.getPropertyValue(name).trim() || fallback;
    const made = new Waveform(
      box,
      {
        isCurrent: () => currentRef.current.id === file.id,
        currentTime: () => engine.current!.currentTime,
        duration: () => (Number.isFinite(engine.current!.audio.duration) ? engine.current!.audio.duration : (file.duration ?? 0)),
        playing: () => engine.current!.playing,
        seeking: () => engine.current!.audio.seeking,
        seek: (to) => engine.current!.seek(to),
        play: () => engine.current!.play(),
        pause: () => engine.current!.pause(),
        selectRange: (start) => engine.current!.seek(start),
      },
      { wave: color('--muted', '#9aa4b2'), played: color('--accent', '#3b82f6'), playhead: color('--ink', '#111827') },
    );
    waveform.current = made;
    try {
      await made.draw(peaks.data.url);
      box.dataset.drawn = 'true';
    } catch {
      setError('The waveform could not be loaded.');
    }
  };

  useEffect(() => {
    void load(playing.file, playing.time, playing.play);
  }, [playing.seq]);

  const toggle = () => {
    const made = engine.current!;
    if (made.playing) made.pause();
    else void made.play();
  };

  const ready = playing.versions.filter((version) => version.status === 'ready' && version.audio);
  return (
    <section class="now-playing" aria-label="Player">
      <div class="now-head">
        <button type="button" class="play-toggle" aria-label={isPlaying ? 'Pause' : 'Play'} onClick={toggle}>
          {isPlaying ? '❚❚' : '▶'}
        </button>
        <div class="now-title">
          <strong>{title}</strong>
          {current.name !== title ? <span class="meta"> — {current.versionName ?? current.name}</span> : null}
        </div>
        <span class="meta clock">
          {formatDuration(time)} / {formatDuration(duration)}
        </span>
      </div>
      <input
        type="range"
        class="seek"
        aria-label="Seek"
        min={0}
        max={duration || 0}
        step="any"
        value={time}
        aria-valuetext={`${formatDuration(time)} of ${formatDuration(duration)}`}
        onInput={(event) => engine.current?.seek(Number(event.currentTarget.value))}
      />
      <div class="waveform" ref={waveRef} data-version-id={current.id} />
      {ready.length > 1 ? (
        <div role="radiogroup" aria-label="Version" class="versions">
          {ready.map((version) => (
            <label key={version.id} class="version">
              <input
                type="radio"
                name="player-version"
                value={version.id}
                checked={version.id === current.id}
                onChange={() => void load(version, engine.current!.currentTime, engine.current!.playing)}
              />{' '}
              {version.versionName ?? version.name}
              {version.audio ? <span class="meta"> {level(version.audio.loudness.integratedLufs, 'LUFS')}</span> : null}
            </label>
          ))}
        </div>
      ) : null}
      {error ? (
        <p class="form-error" role="alert">
          {error}
        </p>
      ) : null}
      {/* biome-ignore lint/a11y/useMediaCaption: music without words to caption; the page shows what plays */}
      <audio id="audio" ref={audioRef} />
    </section>
  );
}
