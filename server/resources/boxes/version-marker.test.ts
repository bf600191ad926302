import { describe, expect, it } from 'vitest';
import { sameName, versionMarker, withoutExtension } from './version-marker.ts';

describe('version markers (issue 21: versions stack themselves)', () => {
  it.each([
    ['Night Drive v2.wav', 'Night Drive', 'v2'],
    ['Night Drive V3.wav', 'Night Drive', 'V3'],
    ['Night Drive version 4.flac', 'Night Drive', 'version 4'],
    ['Night Drive Version4.flac', 'Night Drive', 'Version4'],
    ['Night Drive take 5.wav', 'Night Drive', 'take 5'],
    ['Night Drive - take 5.wav', 'Night Drive', 'take 5'],
    ['Night Drive_2.wav', 'Night Drive', '_2'],
    ['Night Drive-2.wav', 'Night Drive', '-2'],
    ['Night Drive -2.wav', 'Night Drive', '-2'],
    ['Night Drive (2).wav', 'Night Drive', '(2)'],
    ['Night Drive(2).wav', 'Night Drive', '(2)'],
    ['Night_Drive_v2.wav', 'Night_Drive', 'v2'],
    ['night-drive-v12.mp3', 'night-drive', 'v12'],
    ['Night Drive v2', 'Night Drive', 'v2'],
    ['  Night Drive v2.wav  ', 'Night Drive', 'v2'],
    ['Mr. Brightside v2.wav', 'Mr. Brightside', 'v2'],
  ])('reads %j as a version %s of %j', (name, rest, marker) => {
    expect(versionMarker(name)).toEqual({ rest, marker });
  });

  it.each([
    'Night Drive.wav',
    'Night Drive 2.wav',
    'Dev2.wav',
    'Retake3.wav',
    'v2.wav',
    '(2).wav',
    '_2.wav',
    'Night Drive v2.5.wav',
    'Night Drive vocals.wav',
    'Night Drive v.wav',
  ])('finds no version marker in %j', (name) => {
    expect(versionMarker(name)).toBeUndefined();
  });

  it('takes off only what looks like an extension', () => {
    expect(withoutExtension('Night Drive.wav')).toBe('Night Drive');
    expect(withoutExtension('Night Drive.tar.gz')).toBe('Night Drive.tar');
    expect(withoutExtension('Night Drive')).toBe('Night Drive');
    expect(withoutExtension('.wav')).toBe('.wav');
    expect(withoutExtension('Mix v2.5')).toBe('Mix v2.5');
    expect(withoutExtension('Mr. Brightside')).toBe('Mr. Brightside');
  });

  it('compares names without case, and without spaces at either end', () => {
    expect(sameName(' night drive ', 'Night Drive')).toBe(true);
    expect(sameName('Night Drive', 'Night  Drive')).toBe(false);
    expect(sameName('Night Drive', 'Night Drive 2')).toBe(false);
  });
});
