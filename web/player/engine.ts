/**
 * The page's one audio path: a single <audio> element feeding Web Audio,
 *
 *   <audio> → MediaElementSource → loudness GainNode → volume GainNode → speakers
 *
 * The loudness gain is a GainNode because matching may boost a quiet track
 * (shared/reference.md: "`audio.volume` cannot boost, so use
 * AudioContext.createMediaElementSource(audio) → GainNode → destination").
 * The streams come from our own origin, so Web Audio hears them (media from
 * another origin would pass through as silence without CORS).
 *
 * One element for the whole page keeps one playhead: switching versions or
 * quality changes its source and puts the position back (A/B comparison).
 */
import { dbToGain, gainToDb } from './loudness.ts';

export interface Source {
  url: string;
  /** What the source is, written onto the element for people and tests: data-track-id, data-version-id, data-quality. */
  labels: Record<string, string>;
}

export class AudioEngine {
  readonly audio: HTMLAudioElement;
  private context?: AudioContext;
  private loudnessGain?: GainNode;
  private volumeGain?: GainNode;
  private wantedGainDb = 0;
  /** A position to restore once the new source's metadata has loaded, and whether to play on from there. */
  private restore?: { time: number; play: boolean };

  constructor(audio: HTMLAudioElement) {
    this.audio = audio;
    audio.preload = 'metadata';
    audio.addEventListener('loadedmetadata', () => {
      const restore = this.restore;
      this.restore = undefined;
      if (!restore) return;
      if (restore.time > 0) this.audio.currentTime = Math.min(restore.time, this.audio.duration || restore.time);
      if (restore.play) void this.play();
    });
  }

  /**
   * Builds the Web Audio graph. Browsers start an AudioContext suspended until
   * a user gesture; the graph can be built before that (it just stays silent)
   * and `play()`, which runs in the click, resumes it.
   */
  private graph(): void {
    if (this.context || typeof AudioContext === 'undefined') return;
    this.context = new AudioContext();
    const source = this.context.createMediaElementSource(this.audio);
    this.loudnessGain = this.context.createGain();
    this.volumeGain = this.context.createGain();
    this.loudnessGain.gain.value = dbToGain(this.wantedGainDb);
    this.volumeGain.gain.value = 1;
    source.connect(this.loudnessGain).connect(this.volumeGain).connect(this.context.destination);
  }

  /** Plays from the current position; resumes the audio context inside the user's gesture. */
  async play(): Promise<void> {
    this.graph();
    if (this.context?.state === 'suspended') void this.context.resume();
    if (!this.audio.src) return;
    try {
      await this.audio.play();
    } catch (error) {
      // A newer load() or pause() interrupted this play: not a failure.
      if ((error as DOMException).name !== 'AbortError') throw error;
    }
  }

  pause(): void {
    this.audio.pause();
  }

  get playing(): boolean {
    return !this.audio.paused && !this.audio.ended;
  }

  /**
   * Switches the element to another source. With `keepPosition`, the new one
   * starts where the old one was (a version or quality switch, a renewed
   * URL); playback goes on if it was going.
   */
  load(source: Source, { time = 0, play = this.playing }: { time?: number; play?: boolean } = {}): void {
    for (const [name, value] of Object.entries(source.labels)) this.audio.dataset[name] = value;
    if (this.audio.src === source.url) {
      this.seek(time);
      if (play) void this.play();
      return;
    }
    this.restore = { time, play };
    this.audio.src = source.url;
    this.audio.load();
  }

  /** Empties the element: a locked player keeps no source. */
  unload(): void {
    this.restore = undefined;
    this.audio.pause();
    this.audio.removeAttribute('src');
    this.audio.load();
  }

  seek(time: number): void {
    if (this.restore) {
      this.restore.time = time;
      return;
    }
    const duration = this.audio.duration;
    this.audio.currentTime = Number.isFinite(duration) ? Math.min(Math.max(0, time), duration) : Math.max(0, time);
  }

  get currentTime(): number {
    return this.restore?.time ?? this.audio.currentTime;
  }

  setVolume(volume: number): void {
    this.graph();
    if (this.volumeGain) this.volumeGain.gain.value = volume;
    else this.audio.volume = volume;
  }

  /** Sets the loudness-match gain, in dB (0 to leave the level alone). */
  setGainDb(db: number): void {
    this.wantedGainDb = db;
    this.graph();
    if (this.loudnessGain) this.loudnessGain.gain.value = dbToGain(db);
  }

  /** The gain the loudness GainNode applies now, in dB: read back from the node, not from what was asked of it. */
  get gainDb(): number {
    return this.loudnessGain ? gainToDb(this.loudnessGain.gain.value) : this.wantedGainDb;
  }
}
