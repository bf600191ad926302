/**
 * One track's waveform, drawn by Peaks.js (BBC) from the audiowaveform peaks
 * the server made at analysis (the `.dat` file, 100 pixels per second). Every
 * track gets one, but they share the page's single audio element: each Peaks
 * instance talks to the page through a player adapter (Peaks' "external
 * player" interface) that reports the real playhead only while its track is
 * the one playing, and asks the page to switch tracks when it is clicked.
 *
 * The whole track fits the width (zoom `auto`). A click (or tap) seeks; a
 * drag marks a range, which the comment form then uses.
 */
import Peaks, { type PeaksInstance, type PlayerAdapter } from 'peaks.js';

export interface WaveformHost {
  /** Whether this waveform's track and version is what the audio element plays. */
  isCurrent(): boolean;
  currentTime(): number;
  duration(): number;
  playing(): boolean;
  seeking(): boolean;
  /** A click on the waveform: make this track current if it is not, then seek. */
  seek(time: number): void;
  play(): Promise<void>;
  pause(): void;
  /** A range dragged on the waveform. */
  selectRange(start: number, end: number): void;
}

export interface Marker {
  id: string;
  time: number;
  end?: number;
  label: string;
}

type Emitter = Parameters<PlayerAdapter['init']>[0];

/** How far (in pixels) a press may move and still count as a click rather than a drag. */
const CLICK_SLOP_PX = 4;

export class Waveform {
  private peaks?: PeaksInstance;
  private emitter?: Emitter;
  private markers: Marker[] = [];
  private resize?: ResizeObserver;
  private rangeId?: string;

  readonly container: HTMLElement;
  private readonly host: WaveformHost;
  private readonly colors: { wave: string; played: string; playhead: string };

  constructor(
    container: HTMLElement,
    host: WaveformHost,
    colors: { wave: string; played: string; playhead: string },
  ) {
    this.container = container;
    this.host = host;
    this.colors = colors;
  }

  /** Loads the peaks at `datUrl` (a signed URL) and draws them; a no-op once drawn with the same URL. */
  async draw(datUrl: string): Promise<void> {
    if (this.peaks) {
      this.peaks.destroy();
      this.peaks = undefined;
    }
    const host = this.host;
    const adapter: PlayerAdapter = {
      init: async (emitter) => {
        this.emitter = emitter;
      },
      destroy: () => {
        this.emitter = undefined;
      },
      play: () => host.play(),
      pause: () => host.pause(),
      isPlaying: () => host.isCurrent() && host.playing(),
      isSeeking: () => host.isCurrent() && host.seeking(),
      getCurrentTime: () => (host.isCurrent() ? host.currentTime() : 0),
      getDuration: () => host.duration(),
      seek: (time) => host.seek(time),
    };
    const peaks = await new Promise<PeaksInstance>((resolve, reject) => {
      Peaks.init(
        {
          zoomview: {
            container: this.container,
            waveformColor: this.colors.wave,
            playedWaveformColor: this.colors.played,
            playheadColor: this.colors.playhead,
            showAxisLabels: false,
            wheelMode: 'none',
            autoScroll: false,
          },
          dataUri: { arraybuffer: datUrl },
          player: adapter,
          keyboard: false,
          emitCueEvents: false,
          segmentOptions: { overlayColor: this.colors.played, overlayOpacity: 0.25, markers: false, overlay: true },
        },
        (error, instance) => (error || !instance ? reject(error ?? new Error('Peaks did not start')) : resolve(instance)),
      );
    });
    this.peaks = peaks;
    const view = peaks.views.getView('zoomview');
    view?.setZoom({ seconds: 'auto' });
    view?.setWaveformDragMode('insert-segment');
    view?.enableMarkerEditing(false);
    // In Peaks' insert-segment mode every press inserts a segment, a click or a tap one of no length. So a
    // press that hardly moved is a click: it seeks. A drag is a range: the one the comment form uses next.
    peaks.on('segments.insert', ({ segment }) => {
      const pixels = ((segment.endTime - segment.startTime) / Math.max(this.host.duration(), 0.001)) * this.container.clientWidth;
      if (pixels < CLICK_SLOP_PX) {
        if (segment.id) peaks.segments.removeById(segment.id);
        this.host.seek(segment.startTime);
        return;
      }
      if (this.rangeId) peaks.segments.removeById(this.rangeId);
      this.rangeId = segment.id;
      this.host.selectRange(segment.startTime, segment.endTime);
    });
    peaks.on('points.click', ({ point }) => this.host.seek(point.time));
    peaks.on('segments.click', ({ segment }) => this.host.seek(segment.startTime));
    this.resize ??= new ResizeObserver(() => {
      const zoomview = this.peaks?.views.getView('zoomview');
      zoomview?.fitToContainer();
      zoomview?.setZoom({ seconds: 'auto' });
    });
    this.resize.observe(this.container);
    this.showMarkers(this.markers);
  }

  /** Moves the playhead: the page calls this on the audio element's events while this track is current. */
  update(event: 'timeupdate' | 'seeked' | 'playing' | 'pause' | 'ended' | 'canplay', time: number): void {
    const emitter = this.emitter;
    if (!emitter) return;
    if (event === 'ended') emitter.emit('player.ended');
    else if (event === 'canplay') emitter.emit('player.canplay');
    else emitter.emit(`player.${event}`, time);
  }

  /** Comment markers: a point for a moment, a segment for a range. */
  showMarkers(markers: Marker[]): void {
    this.markers = markers;
    const peaks = this.peaks;
    if (!peaks) return;
    peaks.points.removeAll();
    for (const segment of peaks.segments.getSegments()) if (segment.id && segment.id !== this.rangeId) peaks.segments.removeById(segment.id);
    for (const marker of markers) {
      if (marker.end !== undefined) peaks.segments.add({ id: `c-${marker.id}`, startTime: marker.time, endTime: marker.end, labelText: marker.label, editable: false });
      else peaks.points.add({ id: `c-${marker.id}`, time: marker.time, labelText: marker.label, editable: false, color: this.colors.playhead });
    }
  }

  clearRange(): void {
    if (this.rangeId) this.peaks?.segments.removeById(this.rangeId);
    this.rangeId = undefined;
  }

  destroy(): void {
    this.resize?.disconnect();
    this.peaks?.destroy();
    this.peaks = undefined;
  }
}
