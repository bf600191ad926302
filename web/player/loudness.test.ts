import { describe, expect, it } from 'vitest';
import { matchGainDb, dbToGain, gainToDb } from './loudness.ts';

describe('the loudness-match gain', () => {
  it('is target − I for a loud track: a cut, whatever the platform', () => {
    expect(matchGainDb({ targetLufs: -14 }, { integratedLufs: -8, truePeakDbtp: 0.5 })).toBeCloseTo(-6, 9);
    expect(matchGainDb({ targetLufs: -14, loudnessPlatform: 'youtube' }, { integratedLufs: -8, truePeakDbtp: 0.5 })).toBeCloseTo(-6, 9);
  });

  it("boosts a quiet track in full while the true peak stays under −1 dBTP (the reference's worked example: −18 LUFS, −4 dBTP, target −14 → +3 dB is the cap; here +4 fits)", () => {
    expect(matchGainDb({ targetLufs: -14 }, { integratedLufs: -18, truePeakDbtp: -4 })).toBeCloseTo(3, 9);
    expect(matchGainDb({ targetLufs: -14 }, { integratedLufs: -18, truePeakDbtp: -6 })).toBeCloseTo(4, 9);
  });

  it('caps a boost at the true-peak ceiling, and never turns a capped boost into a cut', () => {
    expect(matchGainDb({ targetLufs: -14 }, { integratedLufs: -24, truePeakDbtp: -2 })).toBeCloseTo(1, 9);
    expect(matchGainDb({ targetLufs: -14 }, { integratedLufs: -20, truePeakDbtp: 0 })).toBe(0);
  });

  it('does not boost on the down-only platforms, and does on Spotify and Apple Music', () => {
    for (const platform of ['youtube', 'tidal', 'deezer', 'amazon-music'] as const) {
      expect(matchGainDb({ targetLufs: -14, loudnessPlatform: platform }, { integratedLufs: -30, truePeakDbtp: -20 })).toBe(0);
    }
    expect(matchGainDb({ targetLufs: -14, loudnessPlatform: 'spotify' }, { integratedLufs: -30, truePeakDbtp: -20 })).toBeCloseTo(16, 9);
    expect(matchGainDb({ targetLufs: -16, loudnessPlatform: 'apple-music' }, { integratedLufs: -30, truePeakDbtp: -20 })).toBeCloseTo(14, 9);
  });

  it('converts between decibels and linear gain both ways', () => {
    expect(dbToGain(-6.0206)).toBeCloseTo(0.5, 4);
    expect(gainToDb(dbToGain(3.7))).toBeCloseTo(3.7, 9);
  });
});
