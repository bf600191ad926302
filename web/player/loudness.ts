/**
 * The gain a player applies to match loudness, per the platform rules in
 * shared/reference.md ("Gain a player applies"):
 *
 *   - "gain = target − I."
 *   - "If the gain is positive, cap it so that truePeak + gain ≤ −1 dBTP.
 *     Matching must never clip."
 *   - "For a down-only platform, clamp the gain to ≤ 0."
 *
 * The target comes resolved in the view (`options.targetLufs`: the player's
 * own, else its platform's, else −14 LUFS); the platform says whether quiet
 * tracks may be turned up at all.
 */
export type LoudnessPlatform = 'spotify' | 'apple-music' | 'youtube' | 'tidal' | 'deezer' | 'amazon-music';

/**
 * The platforms that only turn loud tracks down (reference table: YouTube
 * and Tidal "no, only turns loud tracks down"; Deezer and Amazon Music
 * "unclear; treat as down-only").
 */
export const DOWN_ONLY_PLATFORMS: ReadonlySet<LoudnessPlatform> = new Set(['youtube', 'tidal', 'deezer', 'amazon-music']);

/** The ceiling a boost may lift the true peak to, in dBTP. */
export const TRUE_PEAK_CEILING_DBTP = -1;

export interface Loudness {
  integratedLufs: number;
  truePeakDbtp: number;
}

export function matchGainDb(target: { targetLufs: number; loudnessPlatform?: LoudnessPlatform }, loudness: Loudness): number {
  const gain = target.targetLufs - loudness.integratedLufs;
  if (gain <= 0) return gain;
  if (target.loudnessPlatform && DOWN_ONLY_PLATFORMS.has(target.loudnessPlatform)) return 0;
  // A track already above the ceiling gets no boost at all, never a cut it would not otherwise get.
  return Math.max(0, Math.min(gain, TRUE_PEAK_CEILING_DBTP - loudness.truePeakDbtp));
}

export const dbToGain = (db: number) => 10 ** (db / 20);
export const gainToDb = (gain: number) => 20 * Math.log10(gain);
