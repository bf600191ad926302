/**
 * The player in its open state: header, transport, tracks with waveforms,
 * and comments. Everything it shows and plays comes from the listener's view
 * (getPlayerView), which is all this listener may see and do; the page adds
 * no rule of its own beyond what the view says.
 */
import type { PlayerApi, PlayerView, Quality, ViewTrack, ViewVersion } from './api.ts';
import { h, formatDb, formatLevel, formatTime, icon, ICONS, price, replaceChildren } from './dom.ts';
import { AudioEngine } from './engine.ts';
import { PlayReporter } from './listening.ts';
import { matchGainDb } from './loudness.ts';
import { Waveform } from './waveform.ts';
import { CommentsPanel } from './comments.ts';
import { applyAccent } from './theme.ts';
import { payButton } from './locked.ts';

export interface PageConfig {
  playerId: string;
  /** Absolute URL of the API root (…/api/v1). */
  apiBase: string;
  /** The compact page for iframes: no comments panel, a link to the full page. */
  embed: boolean;
  /** The full player page's URL, for the embed's link out. */
  pageUrl: string;
}

/** How long before `urlsExpire` the page reads the view again, and the least it waits. */
const RENEW_AHEAD_MS = 5 * 60_000;
const RENEW_MIN_DELAY_MS = 10_000;
/** The arrow keys' seek step, in seconds. */
const ARROW_SEEK_SECONDS = 5;
/** Below this downlink (Mbit/s, Network Information API) the page defaults to the compressed stream. */
const FAST_DOWNLINK_MBPS = 2;
/** The least time between two attempts to recover a failed stream. */
const RECOVERY_INTERVAL_MS = 60_000;

const QUALITY_LABELS: Record<Quality, string> = { original: 'Original', lossless: 'Lossless (FLAC)', compressed: 'Compressed (AAC)' };

export class PlayerApp {
  private view: PlayerView;
  private trackIndex = 0;
  /** The version each track shows, by track id: the newest until the listener picks another. */
  private readonly versionOf = new Map<string, string>();
  private quality: Quality | undefined;
  private loudnessOn: boolean;
  private readonly engine: AudioEngine;
  private readonly waveforms = new Map<string, Waveform>();
  private readonly trackItems = new Map<string, HTMLLIElement>();
  private comments?: CommentsPanel;
  private renewTimer?: ReturnType<typeof setTimeout>;
  /** A renewed view whose stream URL waits for the audio to pause before it replaces the playing one. */
  private swapPending = false;
  private seekDragging = false;
  private lastRecovery = 0;
  private visible?: IntersectionObserver;
  /** What draws each waveform box once it scrolls into view. */
  private readonly pendingDraws = new WeakMap<Element, () => Promise<void>>();

  // The transport's controls, made once.
  private readonly playButton = h('button', { type: 'button', class: 'play', 'aria-label': 'Play' }, icon(ICONS.play));
  private readonly seekSlider = h('input', { type: 'range', min: '0', max: '0', step: 'any', value: '0', 'aria-label': 'Seek', class: 'seek' });
  private readonly timeText = h('span', { class: 'clock', 'aria-hidden': 'true' }, '0:00 / 0:00');
  private readonly volumeSlider = h('input', { type: 'range', min: '0', max: '1', step: '0.01', value: '1', 'aria-label': 'Volume', class: 'volume' });
  private readonly versionGroup = h('div', { role: 'radiogroup', 'aria-label': 'Version', class: 'versions' });
  private readonly qualitySelect = h('select', { 'aria-label': 'Quality' });
  private readonly loudnessSwitch = h('input', { type: 'checkbox', role: 'switch', id: 'loudness-switch' });
  private readonly gainOutput = h('output', { id: 'loudness-gain', for: 'loudness-switch', 'aria-live': 'polite' });
  private readonly nowPlaying = h('p', { class: 'now-playing' });

  private readonly root: HTMLElement;
  private readonly api: PlayerApi;
  private readonly config: PageConfig;

  constructor(
    root: HTMLElement,
    api: PlayerApi,
    config: PageConfig,
    view: PlayerView,
  ) {
    this.root = root;
    this.api = api;
    this.config = config;
    this.view = view;
    this.loudnessOn = view.options.loudnessMatch;
    this.engine = new AudioEngine(h('audio', { id: 'audio' }));
    this.quality = view.defaultQuality ?? this.qualityFromConnection();
  }

  start(): void {
    if (this.view.tracks.length === 0) {
      // An empty project: the owner has made the player before uploading. Say so, and look again later.
      applyAccent(this.view.color);
      document.title = this.view.name;
      replaceChildren(this.root, h('h1', {}, this.view.name), h('p', { class: 'note' }, 'No tracks yet. Reload this page once its owner has uploaded some.'));
      this.root.dataset.state = 'ready';
      return;
    }
    this.render();
    // Before the page's own listeners: it hears a track end before the next one is loaded.
    new PlayReporter(this.engine.audio, this.api, () => this.view.access.stream);
    this.listen();
    this.selectTrack(0, { play: false });
    this.scheduleRenewal();
    this.root.dataset.state = 'ready';
  }

  // ---------------------------------------------------------------- state

  private get track(): ViewTrack {
    return this.view.tracks[this.trackIndex];
  }

  private versionFor(track: ViewTrack): ViewVersion {
    const id = this.versionOf.get(track.id);
    return track.versions.find((version) => version.id === id) ?? track.versions[0];
  }

  private get version(): ViewVersion {
    return this.versionFor(this.track);
  }

  /** The stream to play for a version: the chosen quality when it has it, else the best it has (qualities are best first). */
  private streamOf(version: ViewVersion): { quality: Quality; url: string } | undefined {
    const streams = version.streams ?? {};
    const order = this.quality ? [this.quality, ...this.view.qualities] : this.view.qualities;
    for (const quality of order) {
      const url = streams[quality];
      if (url) return { quality, url };
    }
    return undefined;
  }

  /**
   * The interface on the player object, `quality` unset: "the frontend then plays at the highest
   * quality the listener's connection allows". The Network Information API's
   * downlink says so where the browser has it; a listener who asked to save
   * data gets the compressed stream.
   */
  private qualityFromConnection(): Quality | undefined {
    const connection = (navigator as Navigator & { connection?: { downlink?: number; saveData?: boolean } }).connection;
    const slow = connection?.saveData === true || (connection?.downlink !== undefined && connection.downlink < FAST_DOWNLINK_MBPS);
    if (slow && this.view.qualities.includes('compressed')) return 'compressed';
    return this.view.qualities[0];
  }

  private gainFor(version: ViewVersion): number {
    if (!this.view.options.loudnessMatch || !this.loudnessOn || !version.loudness) return 0;
    return matchGainDb({ targetLufs: this.view.options.targetLufs, loudnessPlatform: this.view.options.loudnessPlatform }, version.loudness);
  }

  // ---------------------------------------------------------------- rendering

  private render(): void {
    const view = this.view;
    applyAccent(view.color);
    document.title = view.projectName ? `${view.name} · ${view.projectName}` : view.name;

    const header = h(
      'header',
      { class: 'player-header' },
      view.artwork ? h('img', { class: 'artwork', src: view.artwork.url, alt: `Artwork of ${view.projectName ?? view.name}`, width: '160', height: '160' }) : null,
      h('div', { class: 'titles' }, h('h1', {}, view.name), view.projectName ? h('p', { class: 'project' }, view.projectName) : null, this.paywallNote()),
    );

    for (const quality of view.qualities) this.qualitySelect.append(h('option', { value: quality }, QUALITY_LABELS[quality]));
    const transport = h(
      'section',
      { class: 'transport', 'aria-label': 'Player controls' },
      this.nowPlaying,
      h(
        'div',
        { class: 'buttons' },
        h('button', { type: 'button', class: 'previous', 'aria-label': 'Previous track', onclick: () => this.step(-1) }, icon(ICONS.previous)),
        this.playButton,
        h('button', { type: 'button', class: 'next', 'aria-label': 'Next track', onclick: () => this.step(1) }, icon(ICONS.next)),
        this.seekSlider,
        this.timeText,
      ),
      h(
        'div',
        { class: 'settings' },
        h('label', { class: 'volume-label' }, h('span', { class: 'visually-hidden' }, 'Volume'), this.volumeSlider),
        this.versionGroup,
        view.qualities.length > 1 ? h('label', { class: 'quality' }, h('span', { 'aria-hidden': 'true' }, 'Quality'), this.qualitySelect) : null,
        view.options.loudnessMatch ? h('span', { class: 'loudness' }, h('label', {}, this.loudnessSwitch, ' Loudness match'), this.gainOutput) : null,
      ),
    );
    this.loudnessSwitch.checked = this.loudnessOn;

    const list = h('ol', { id: 'tracks', class: 'tracks' });
    view.tracks.forEach((track, index) => {
      const item = this.renderTrack(track, index);
      this.trackItems.set(track.id, item);
      list.append(item);
    });

    const main = h('div', { class: 'columns' }, list);
    if (view.access.comment && !this.config.embed) {
      this.comments = new CommentsPanel(this.api, view, {
        currentTime: () => this.engine.currentTime,
        seek: (time) => this.seekCurrent(time),
        showMarkers: (versionId, markers) => this.waveforms.get(versionId)?.showMarkers(markers),
        clearRange: (versionId) => this.waveforms.get(versionId)?.clearRange(),
      });
      main.append(this.comments.element);
    }

    const footer = this.config.embed ? h('p', { class: 'embed-link' }, h('a', { href: this.config.pageUrl, target: '_blank', rel: 'noopener' }, 'Open the full player')) : null;
    replaceChildren(this.root, header, transport, main, footer, this.engine.audio);
  }

  private paywallNote(): HTMLElement | null {
    const paywall = this.view.paywall;
    if (!paywall) return null;
    // The buyer's record of what they bought: the purchase id to quote, and the provider's receipt.
    if (paywall.paid && paywall.purchase) {
      const receipt = paywall.purchase.receiptUrl ? h('a', { href: paywall.purchase.receiptUrl, target: '_blank', rel: 'noopener' }, 'receipt') : null;
      return h('p', { class: 'paywall-note purchase' }, `Bought (purchase ${paywall.purchase.id})`, receipt ? ' · ' : '', receipt);
    }
    if (paywall.paid || paywall.fulfillment !== 'allow-download') return null;
    return h(
      'div',
      { class: 'paywall-note' },
      h('p', {}, `Downloads open once this player is bought (${price(paywall.price)}).`),
      payButton(this.api, paywall, this.config.embed ? { pageUrl: this.config.pageUrl } : undefined),
    );
  }

  private renderTrack(track: ViewTrack, index: number): HTMLLIElement {
    const item = h('li', { class: 'track', dataset: { trackId: track.id } });
    this.fillTrack(item, track, index);
    return item;
  }

  /** (Re)draws a track's row for the version it shows now. */
  private fillTrack(item: HTMLLIElement, track: ViewTrack, index: number): void {
    const version = this.versionFor(track);
    const waveformBox = h('div', { class: 'waveform', dataset: { versionId: version.id } });
    const details = h('div', { class: 'details' });
    if (version.loudness) details.append(h('span', {}, `${formatLevel(version.loudness.integratedLufs, 'LUFS')} · ${formatLevel(version.loudness.truePeakDbtp, 'dBTP')}`));
    if (version.duration !== undefined) details.append(h('span', {}, formatTime(version.duration)));
    if (track.versions.length > 1) details.append(h('span', {}, `${track.versions.length} versions`));
    const tags = version.tags;
    const metadata =
      tags || version.isrc
        ? h(
            'dl',
            { class: 'metadata' },
            ...(tags?.title ? [h('dt', {}, 'Title'), h('dd', {}, tags.title)] : []),
            ...(tags?.artist ? [h('dt', {}, 'Artist'), h('dd', {}, tags.artist)] : []),
            ...(tags?.album ? [h('dt', {}, 'Album'), h('dd', {}, tags.album)] : []),
            ...(version.isrc ? [h('dt', {}, 'ISRC'), h('dd', {}, version.isrc)] : []),
          )
        : null;
    const download = version.download
      ? h('a', { class: 'download', href: version.download.url, download: version.download.filename, onclick: () => this.afterDownload() }, `Download ${track.name}`)
      : null;
    let body: HTMLElement;
    if (version.peaks) body = waveformBox;
    else if (!this.view.access.stream) body = h('p', { class: 'locked-note' }, 'Locked');
    else if (version.status === 'failed') body = h('p', { class: 'note' }, 'This file could not be read as audio.');
    else if (version.status !== 'ready') body = h('p', { class: 'note' }, 'Still being processed. Reload in a moment.');
    else body = h('p', { class: 'note' }, version.streams ? '' : 'Not audio: download only.');

    const shown = item.querySelector('.waveform');
    if (shown) this.visible?.unobserve(shown);
    replaceChildren(
      item,
      h(
        'div',
        { class: 'track-head' },
        h('button', { type: 'button', class: 'track-title', onclick: () => this.selectTrack(index, { play: true }) }, track.name),
        track.subtitle ? h('span', { class: 'subtitle' }, track.subtitle) : null,
        details,
      ),
      body,
      metadata,
      download,
    );
    // The row shows one version's waveform: the one it showed before (another version, now off the page) goes.
    for (const other of track.versions) {
      this.waveforms.get(other.id)?.destroy();
      this.waveforms.delete(other.id);
    }
    if (version.peaks) this.drawWhenVisible(waveformBox, () => this.drawWaveform(waveformBox, track, version));
  }

  /** Waveforms are drawn when they scroll into view: a player of 200 tracks loads the peaks it shows. */
  private drawWhenVisible(box: HTMLElement, draw: () => Promise<void>): void {
    this.visible ??= new IntersectionObserver((entries) => {
      for (const entry of entries) {
        if (!entry.isIntersecting) continue;
        this.visible!.unobserve(entry.target);
        void this.pendingDraws.get(entry.target)?.();
        this.pendingDraws.delete(entry.target);
      }
    });
    this.pendingDraws.set(box, draw);
    this.visible.observe(box);
  }

  private async drawWaveform(box: HTMLElement, track: ViewTrack, version: ViewVersion): Promise<void> {
    const styles = getComputedStyle(document.documentElement);
    const color = (name: string, fallback: string) => styles.getPropertyValue(name).trim() || fallback;
    const isCurrent = () => this.track.id === track.id && this.version.id === version.id;
    const waveform = new Waveform(
      box,
      {
        isCurrent,
        currentTime: () => this.engine.currentTime,
        duration: () => (isCurrent() && Number.isFinite(this.engine.audio.duration) ? this.engine.audio.duration : (version.duration ?? 0)),
        playing: () => this.engine.playing,
        seeking: () => this.engine.audio.seeking,
        seek: (time) => this.seekOn(track, version, time),
        play: () => this.play(),
        pause: () => this.engine.pause(),
        selectRange: (start, end) => {
          if (!isCurrent()) this.seekOn(track, version, start);
          this.comments?.setRange(version.id, start, end);
        },
      },
      { wave: color('--wave', '#9aa4b2'), played: color('--accent', '#3b82f6'), playhead: color('--text', '#111827') },
    );
    this.waveforms.get(version.id)?.destroy();
    this.waveforms.set(version.id, waveform);
    try {
      await waveform.draw(version.peaks!.dat);
      box.dataset.drawn = 'true';
      this.comments?.refreshMarkers(version.id);
    } catch {
      replaceChildren(box, h('p', { class: 'note' }, 'The waveform could not be loaded.'));
    }
  }

  // ---------------------------------------------------------------- transport

  private listen(): void {
    const audio = this.engine.audio;
    this.playButton.addEventListener('click', () => (this.engine.playing ? this.engine.pause() : void this.play()));
    audio.addEventListener('play', () => this.showPlaying());
    audio.addEventListener('pause', () => {
      this.showPlaying();
      if (this.swapPending) this.loadCurrent({ keepPosition: true });
    });
    audio.addEventListener('ended', () => {
      this.showPlaying();
      if (this.trackIndex < this.view.tracks.length - 1) this.selectTrack(this.trackIndex + 1, { play: true });
    });
    audio.addEventListener('error', () => this.recoverFromError());
    for (const event of ['timeupdate', 'seeked', 'playing', 'pause', 'ended', 'canplay'] as const) {
      audio.addEventListener(event, () => {
        if (event === 'timeupdate' || event === 'seeked') {
          this.showTime();
          this.comments?.showWhere();
        }
        this.waveforms.get(this.version.id)?.update(event, audio.currentTime);
      });
    }
    audio.addEventListener('durationchange', () => this.showTime());

    // The slider seeks as it moves; while the listener drags it, the playhead does not pull it back.
    this.seekSlider.addEventListener('pointerdown', () => (this.seekDragging = true));
    this.seekSlider.addEventListener('pointerup', () => (this.seekDragging = false));
    this.seekSlider.addEventListener('input', () => this.engine.seek(Number(this.seekSlider.value)));
    this.seekSlider.addEventListener('change', () => (this.seekDragging = false));
    this.volumeSlider.addEventListener('input', () => this.engine.setVolume(Number(this.volumeSlider.value)));
    this.qualitySelect.addEventListener('change', () => {
      this.quality = this.qualitySelect.value as Quality;
      this.loadCurrent({ keepPosition: true });
    });
    this.loudnessSwitch.addEventListener('change', () => {
      this.loudnessOn = this.loudnessSwitch.checked;
      this.applyGain();
    });

    document.addEventListener('keydown', (event) => this.onKey(event));
    // A tab that slept past `urlsExpire` (timers are throttled in the background) renews as soon as it is back.
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'visible' && Date.now() > this.view.urlsExpire - RENEW_AHEAD_MS) void this.renew();
    });
  }

  /** Space plays and pauses, the arrows seek; not while the listener types or works a control that uses those keys. */
  private onKey(event: KeyboardEvent): void {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target as HTMLElement | null;
    const tag = target?.tagName;
    if (tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT' || target?.isContentEditable) return;
    if (event.key === ' ' && tag !== 'BUTTON' && tag !== 'A') {
      event.preventDefault();
      if (this.engine.playing) this.engine.pause();
      else void this.play();
    } else if (event.key === 'ArrowLeft' || event.key === 'ArrowRight') {
      event.preventDefault();
      this.engine.seek(this.engine.currentTime + (event.key === 'ArrowLeft' ? -ARROW_SEEK_SECONDS : ARROW_SEEK_SECONDS));
    }
  }

  private async play(): Promise<void> {
    if (!this.engine.audio.src) this.loadCurrent({ keepPosition: true });
    await this.engine.play();
  }

  private step(direction: -1 | 1): void {
    // "Previous" restarts the track first, as players do, once it has played a few seconds.
    if (direction === -1 && this.engine.currentTime > 3) {
      this.engine.seek(0);
      return;
    }
    const index = this.trackIndex + direction;
    if (index < 0 || index >= this.view.tracks.length) return;
    this.selectTrack(index, { play: this.engine.playing });
  }

  private selectTrack(index: number, { play }: { play: boolean }): void {
    const changed = index !== this.trackIndex || !this.engine.audio.src;
    this.trackIndex = index;
    for (const [id, item] of this.trackItems) {
      if (id === this.track.id) item.setAttribute('aria-current', 'true');
      else item.removeAttribute('aria-current');
    }
    this.renderVersions();
    if (changed) this.loadCurrent({ keepPosition: false, play });
    else if (play) void this.play();
    this.comments?.show(this.track, this.version);
  }

  /** A click on a waveform: that version of that track becomes current, at `time`. */
  private seekOn(track: ViewTrack, version: ViewVersion, time: number): void {
    const index = this.view.tracks.indexOf(track);
    if (index !== this.trackIndex || this.version.id !== version.id) {
      this.versionOf.set(track.id, version.id);
      this.trackIndex = index;
      this.selectTrack(index, { play: this.engine.playing });
    }
    this.seekCurrent(time);
  }

  private seekCurrent(time: number): void {
    if (!this.engine.audio.src) this.loadCurrent({ keepPosition: false, play: false });
    this.engine.seek(time);
    this.showTime();
  }

  /** Points the audio element at the current version in the current quality. */
  private loadCurrent({ keepPosition, play = this.engine.playing }: { keepPosition: boolean; play?: boolean }): void {
    this.swapPending = false;
    const track = this.track;
    const version = this.version;
    const stream = this.streamOf(version);
    this.nowPlaying.textContent = track.versions.length > 1 ? `${track.name} — ${version.versionName ?? version.name}` : track.name;
    this.applyGain();
    if (!stream) {
      this.engine.unload();
      this.showTime();
      return;
    }
    if (this.view.qualities.length > 1) this.qualitySelect.value = stream.quality;
    this.engine.load(
      { url: stream.url, labels: { trackId: track.id, versionId: version.id, quality: stream.quality } },
      { time: keepPosition ? this.engine.currentTime : 0, play },
    );
    this.showTime();
  }

  private applyGain(): void {
    this.engine.setGainDb(this.gainFor(this.version));
    const applied = this.engine.gainDb;
    this.gainOutput.dataset.gainDb = String(applied);
    this.gainOutput.textContent = this.loudnessOn ? formatDb(applied) : 'off';
  }

  /** The radiogroup "Version" of the current track, with each version's loudness against the one playing. */
  private renderVersions(): void {
    const track = this.track;
    const current = this.version;
    this.versionGroup.hidden = track.versions.length < 2;
    if (track.versions.length < 2) {
      this.versionGroup.replaceChildren();
      return;
    }
    replaceChildren(
      this.versionGroup,
      ...track.versions.map((version) => {
        const id = `version-${version.id}`;
        const difference =
          version.loudness && current.loudness && version.id !== current.id
            ? formatDb(version.loudness.integratedLufs - current.loudness.integratedLufs, 'LU')
            : version.loudness
              ? formatLevel(version.loudness.integratedLufs, 'LUFS')
              : '';
        const input = h('input', {
          type: 'radio',
          name: 'version',
          id,
          value: version.id,
          checked: version.id === current.id,
          'aria-describedby': difference ? `${id}-loudness` : undefined,
          onchange: () => this.switchVersion(version),
        });
        // The radio's name is the version's alone; its loudness is its description, outside the label.
        return h(
          'span',
          { class: 'version' },
          input,
          h('label', { for: id }, ` ${version.versionName ?? version.name}`),
          difference ? h('span', { class: 'difference', id: `${id}-loudness` }, difference) : null,
        );
      }),
    );
  }

  /** A/B: the same moment of the other version, playing on if it was playing. */
  private switchVersion(version: ViewVersion): void {
    this.versionOf.set(this.track.id, version.id);
    this.fillTrack(this.trackItems.get(this.track.id)!, this.track, this.trackIndex);
    this.renderVersions();
    this.loadCurrent({ keepPosition: true });
    this.comments?.show(this.track, version);
  }

  private showPlaying(): void {
    const playing = this.engine.playing;
    this.playButton.setAttribute('aria-label', playing ? 'Pause' : 'Play');
    this.playButton.replaceChildren(icon(playing ? ICONS.pause : ICONS.play));
  }

  private showTime(): void {
    const audio = this.engine.audio;
    const duration = Number.isFinite(audio.duration) ? audio.duration : (this.version.duration ?? 0);
    const time = this.engine.currentTime;
    this.seekSlider.max = String(duration);
    if (!this.seekDragging) this.seekSlider.value = String(time);
    this.seekSlider.setAttribute('aria-valuetext', `${formatTime(time)} of ${formatTime(duration)}`);
    this.timeText.textContent = `${formatTime(time)} / ${formatTime(duration)}`;
  }

  // ---------------------------------------------------------------- downloads

  private afterDownload(): void {
    if (!this.view.serviceCTA || this.root.querySelector('.cta')) return;
    const close = h('button', { type: 'button', class: 'close' }, 'Close');
    const notice = h(
      'div',
      { class: 'cta', role: 'status' },
      h('p', {}, 'Your download has started. This player runs on Audio Share: self-hosted players for musicians, with versions, comments and loudness matching.'),
      close,
    );
    close.addEventListener('click', () => notice.remove());
    this.root.append(notice);
  }

  // ---------------------------------------------------------------- signed URLs

  /**
   * The view's URLs expire at `urlsExpire` (views.yaml: "Read the view
   * again before then to renew them; the page does so on its own"). A
   * renewed stream URL replaces a paused one at once, and a playing one at
   * the next pause, or as soon as the old one fails.
   */
  private scheduleRenewal(): void {
    clearTimeout(this.renewTimer);
    const delay = Math.max(RENEW_MIN_DELAY_MS, this.view.urlsExpire - Date.now() - RENEW_AHEAD_MS);
    this.renewTimer = setTimeout(() => void this.renew(), delay);
  }

  private async renew(): Promise<void> {
    const answer = await this.api.view();
    if (!answer.ok) {
      // The player closed for this listener (a password set, the link expired, a session ended): show why.
      if (answer.refusal.status >= 400 && answer.refusal.status < 500 && answer.refusal.status !== 429) {
        this.engine.unload();
        window.location.reload();
      } else this.scheduleRenewal();
      return;
    }
    this.adopt(answer.data);
  }

  /** Takes a renewed view: new URLs for the same tracks. `swapNow`: the playing stream takes its new URL at once, not at the next pause. */
  private adopt(view: PlayerView, { swapNow = false }: { swapNow?: boolean } = {}): void {
    const sameTracks = view.tracks.length === this.view.tracks.length && view.tracks.every((track, i) => track.id === this.view.tracks[i].id);
    if (!sameTracks || view.access.state !== this.view.access.state) {
      window.location.reload();
      return;
    }
    this.view = view;
    for (const track of view.tracks) {
      // Waveforms have their peaks already and streams are swapped below: only the download links need the new URLs now.
      const link = this.trackItems.get(track.id)?.querySelector<HTMLAnchorElement>('a.download');
      const download = this.versionFor(track).download;
      if (link && download) link.href = download.url;
    }
    this.comments?.adopt(view);
    if (this.engine.playing && !swapNow) this.swapPending = true;
    else if (this.engine.audio.src) this.loadCurrent({ keepPosition: true, play: false });
    this.scheduleRenewal();
  }

  /**
   * A stream that fails (most often an expired URL after a long pause) is
   * read again from a fresh view, at the same position; at most once a
   * minute, so a stream that keeps failing shows its error instead of looping.
   */
  private async recoverFromError(): Promise<void> {
    if (!this.engine.audio.src || Date.now() - this.lastRecovery < RECOVERY_INTERVAL_MS) return;
    this.lastRecovery = Date.now();
    const answer = await this.api.view();
    if (!answer.ok) {
      // The player closed for this listener meanwhile: the page shows why.
      window.location.reload();
      return;
    }
    this.adopt(answer.data, { swapNow: true });
  }
}
