/**
 * Reports listening for the player's insights (recordPlay): each play of a
 * version gets a random id; the page reports it once 3 seconds of it were
 * heard ("a play counts once 3 seconds of a track have been heard"), then
 * every 15 seconds heard, and when the listener pauses, the track ends or
 * the page goes away (then with `keepalive`, so the report outlives the
 * page). Only seconds heard and the farthest position go out: the server
 * keeps the listener's display name, if they gave one, and nothing else.
 *
 * Nothing is reported while the view does not let the listener play.
 */
import type { PlayerApi } from './api.ts';

/** The rule: a play counts once 3 seconds of a track have been heard. */
export const COUNTS_AFTER_SECONDS = 3;
/** Seconds heard between two reports of a play going on. */
export const REPORT_EVERY_SECONDS = 15;
/**
 * A step of the playhead larger than this between two `timeupdate`s (which
 * come every 15 to 250 ms while playing) is a jump, not listening.
 */
const MAX_STEP_SECONDS = 1.5;

interface Play {
  id: string;
  fileid: string;
  heard: number;
  position: number;
  /** What the last report sent; nothing new, no report. */
  sentHeard: number;
  sentPosition: number;
}

/** A random play id: crypto.randomUUID needs a secure context, which a self-hosted server on plain HTTP is not; getRandomValues works anywhere. */
function newPlayId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

const rounded = (seconds: number) => Math.round(seconds * 100) / 100;

export class PlayReporter {
  private play?: Play;
  /** The playhead at the last sample while playing; undefined after a pause or a jump. */
  private lastTime?: number;
  private readonly audio: HTMLAudioElement;
  private readonly api: PlayerApi;
  private readonly allowed: () => boolean;

  /** `allowed`: whether the view (as renewed) lets this listener play, and so report. */
  constructor(audio: HTMLAudioElement, api: PlayerApi, allowed: () => boolean) {
    this.audio = audio;
    this.api = api;
    this.allowed = allowed;
    audio.addEventListener('playing', () => this.begin());
    audio.addEventListener('timeupdate', () => {
      this.sample();
      this.reportWhenDue();
    });
    // A seek moves the playhead without anything being heard: sampling starts again where it lands.
    audio.addEventListener('seeking', () => (this.lastTime = undefined));
    audio.addEventListener('pause', () => {
      this.sample(true);
      this.report(false);
    });
    audio.addEventListener('ended', () => {
      this.sample(true);
      this.report(false);
      // Played to the end: playing it again is another play.
      this.play = undefined;
    });
    // Another source (a track, a version, a quality or a renewed URL): what this play heard so far goes out.
    audio.addEventListener('emptied', () => {
      this.lastTime = undefined;
      this.report(false);
    });
    // Leaving mid-play: the stretch since the last timeupdate was heard too.
    window.addEventListener('pagehide', () => {
      this.sample();
      this.report(true);
    });
  }

  /** Playback starts or resumes: the same play while the same version plays on, else a new one. */
  private begin(): void {
    const fileid = this.audio.dataset.versionId;
    if (!fileid) return;
    if (this.play?.fileid !== fileid) {
      this.report(false);
      this.play = { id: newPlayId(), fileid, heard: 0, position: 0, sentHeard: 0, sentPosition: 0 };
    }
    this.lastTime = this.audio.currentTime;
  }

  /**
   * Adds what was heard since the last sample. `stopping`: the element has
   * just paused or ended, and the stretch up to where it stopped was heard;
   * sampling starts again when it plays.
   */
  private sample(stopping = false): void {
    const audio = this.audio;
    const play = this.play;
    if (!play || audio.dataset.versionId !== play.fileid) return;
    if (audio.seeking || (audio.paused && !stopping)) {
      this.lastTime = undefined;
      return;
    }
    const now = audio.currentTime;
    if (this.lastTime !== undefined) {
      const step = now - this.lastTime;
      if (step > 0 && step <= MAX_STEP_SECONDS) play.heard += step;
    }
    this.lastTime = stopping ? undefined : now;
    // Heard twice over (the listener went back), a play is still one hearing of the track: at most its duration, as the server bounds it.
    if (Number.isFinite(audio.duration)) play.heard = Math.min(play.heard, audio.duration);
    play.position = Math.max(play.position, now);
  }

  /** While playing: the first report once the play counts, then one every 15 s heard. */
  private reportWhenDue(): void {
    const play = this.play;
    if (!play) return;
    const firstCount = play.sentHeard < COUNTS_AFTER_SECONDS && play.heard >= COUNTS_AFTER_SECONDS;
    if (firstCount || play.heard - play.sentHeard >= REPORT_EVERY_SECONDS) this.report(false);
  }

  /** Sends what the play has heard, if it counts and something is new; `keepalive` when the page is going away. */
  private report(keepalive: boolean): void {
    const play = this.play;
    if (!play || play.heard < COUNTS_AFTER_SECONDS || !this.allowed()) return;
    if (play.heard <= play.sentHeard && play.position <= play.sentPosition) return;
    play.sentHeard = play.heard;
    play.sentPosition = play.position;
    // The server keeps the largest of each, so reports may cross on the way; one that fails is made good by the next.
    void this.api.recordPlay({ playid: play.id, fileid: play.fileid, heard: rounded(play.heard), position: rounded(play.position) }, keepalive);
  }
}
