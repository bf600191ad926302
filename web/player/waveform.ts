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

/**
 * The widest waveform drawn with a point per pixel. Peaks.js cannot draw a
 * waveform at more pixels per second than its data has ("zoom level must be
 * at least" the data's samples per pixel), and the server's peaks have 100
 * per second: a 1-second track would fill 100 pixels of a 1000-pixel row.
 */
const MAX_DRAWN_WIDTH_PX = 4096;

/** The header of an audiowaveform .dat file, version 2 (24 bytes, little-endian). */
interface DatHeader {
  eightBit: boolean;
  sampleRate: number;
  samplesPerPixel: number;
  length: number;
  channels: number;
}

function datHeader(dat: ArrayBuffer): DatHeader {
  const view = new DataView(dat);
  if (dat.byteLength < 24 || view.getInt32(0, true) !== 2) throw new Error('The waveform data is not an audiowaveform .dat file of version 2.');
  return { eightBit: (view.getUint32(4, true) & 1) === 1, sampleRate: view.getInt32(8, true), samplesPerPixel: view.getInt32(12, true), length: view.getUint32(16, true), channels: view.getInt32(20, true) };
}

/**
 * The peaks with at least MAX_DRAWN_WIDTH_PX points, each point of a short
 * track repeated as often as needed (its samples per pixel divided to
 * match), so that any track fits any width. A long enough track's peaks are
 * returned as they are.
 */
export function peaksForAnyWidth(dat: ArrayBuffer): { dat: ArrayBuffer; header: DatHeader } {
  const header = datHeader(dat);
  if (header.length === 0 || header.length >= MAX_DRAWN_WIDTH_PX) return { dat, header };
  const factor = Math.min(header.samplesPerPixel, Math.ceil(MAX_DRAWN_WIDTH_PX / header.length));
  const samplesPerPixel = Math.floor(header.samplesPerPixel / factor);
  const length = Math.ceil((header.length * header.samplesPerPixel) / samplesPerPixel);
  const bytesPerValue = header.eightBit ? 1 : 2;
  const pointBytes = 2 * header.channels * bytesPerValue;
  const out = new ArrayBuffer(24 + length * pointBytes);
  const source = new Uint8Array(dat, 24);
  const target = new Uint8Array(out, 24);
  new Uint8Array(out, 0, 24).set(new Uint8Array(dat, 0, 24));
  const view = new DataView(out);
  view.setInt32(12, samplesPerPixel, true);
  view.setUint32(16, length, true);
  for (let point = 0; point < length; point++) {
    const from = Math.min(header.length - 1, Math.floor((point * samplesPerPixel) / header.samplesPerPixel));
    target.set(source.subarray(from * pointBytes, (from + 1) * pointBytes), point * pointBytes);
  }
  return { dat: out, header: { ...header, samplesPerPixel, length } };
}

export class Waveform {
  private peaks?: PeaksInstance;
  private emitter?: Emitter;
  private markers: Marker[] = [];
  private resize?: ResizeObserver;
  private rangeId?: string;
  /** The header of the peaks drawn (as spread for any width), once drawn. */
  private drawn?: DatHeader;

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
    const answer = await fetch(datUrl);
    if (!answer.ok) throw new Error(`The waveform data could not be read (${answer.status}).`);
    const { dat, header } = peaksForAnyWidth(await answer.arrayBuffer());
    this.drawn = header;
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
          waveformData: { arraybuffer: dat },
          // Peaks' default levels start at 512 samples per pixel, finer than the peaks of audio above
          // 51.2 kHz (960 at 96 kHz): its first draw then throws. The levels start at the data's own.
          zoomLevels: [1, 2, 4, 8].map((times) => header.samplesPerPixel * times),
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
    this.fitToWidth();
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
      this.peaks?.views.getView('zoomview')?.fitToContainer();
      this.fitToWidth();
    });
    this.resize.observe(this.container);
    this.showMarkers(this.markers);
  }

  /** The whole track across the width; on a screen wider than MAX_DRAWN_WIDTH_PX, as wide as its peaks allow. */
  private fitToWidth(): void {
    const zoomview = this.peaks?.views.getView('zoomview');
    if (!zoomview || !this.drawn) return;
    const { length, samplesPerPixel } = this.drawn;
    // The samples per pixel that fit the whole track in the width; Peaks draws no finer than the peaks' own.
    const fitting = Math.floor((length * samplesPerPixel) / Math.max(1, this.container.clientWidth));
    if (fitting >= samplesPerPixel) zoomview.setZoom({ seconds: 'auto' });
    else zoomview.setZoom({ scale: samplesPerPixel });
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
