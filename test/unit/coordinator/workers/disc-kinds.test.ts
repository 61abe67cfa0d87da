import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { discKinds, workerDiscKinds, type DiscKinds } from '../../../../coordinator/workers/disc-kinds.js';
import type { DriveState } from '../../../../shared/protocol.js';

const OPEN = { lsdvd: '0.17', dvdbackup: '0.4.2', ffmpeg: 'ffmpeg version 5.1.6', abcde: '2.9.3', cdparanoia: 'cdparanoia III 10.2', HandBrakeCLI: 'HandBrake 1.6.1', makemkvcon: null, libdvdcss: null };
const caps = (tools: Record<string, string | null>, schluessel = 0, native = false) => ({ tools, schluessel, native });
const ok = { can: true, missing: null };
const no = (missing: string) => ({ can: false, missing });

describe('disc kinds per worker', () => {
  it('a fresh Debian install (open tools, no libdvdcss, no MakeMKV): audio CDs and unprotected DVDs only', () => {
    assert.deepEqual(discKinds({ capabilities: caps(OPEN), driveKinds: ['device'] }), {
      audio_cd: ok,
      dvd: ok,
      dvd_protected: no('libdvdcss'),
      bluray: no('makemkvcon'),
      uhd: no('makemkvcon'),
    });
  });

  it('with libdvdcss also protected DVDs; with MakeMKV everything but UHD, which needs a key store', () => {
    assert.deepEqual(discKinds({ capabilities: caps({ ...OPEN, libdvdcss: 'libdvdcss.so.2.2.0' }), driveKinds: ['device'] }).dvd_protected, ok);
    const mkv = discKinds({ capabilities: caps({ ...OPEN, makemkvcon: 'MakeMKV v1.17.8 linux(x64-release) started' }), driveKinds: ['device'] });
    assert.deepEqual([mkv.dvd, mkv.dvd_protected, mkv.bluray, mkv.uhd], [ok, ok, ok, no('keystore')]);
    assert.deepEqual(discKinds({ capabilities: caps({ makemkvcon: 'v1.17.8' }, 12), driveKinds: ['device'] }).uhd, ok);
  });

  it('MakeMKV alone rips every DVD; without it the first missing open tool is named', () => {
    const only = discKinds({ capabilities: caps({ makemkvcon: 'v1.17.8', lsdvd: null, dvdbackup: null, ffmpeg: null }), driveKinds: ['device'] });
    assert.deepEqual([only.dvd, only.dvd_protected], [ok, ok]);
    const noBackup = discKinds({ capabilities: caps({ ...OPEN, dvdbackup: null, libdvdcss: 'libdvdcss.so.2' }), driveKinds: ['device'] });
    assert.deepEqual([noBackup.dvd, noBackup.dvd_protected], [no('dvdbackup'), no('dvdbackup')]);
  });

  it('audio CDs: abcde and cdparanoia for a physical drive, ffmpeg for an image drive', () => {
    const tools = { ...OPEN, abcde: null };
    assert.deepEqual(discKinds({ capabilities: caps(tools), driveKinds: ['device'] }).audio_cd, no('abcde'));
    assert.deepEqual(discKinds({ capabilities: caps(tools), driveKinds: ['image'] }).audio_cd, ok);
    assert.deepEqual(discKinds({ capabilities: caps({ ...OPEN, cdparanoia: null }), driveKinds: [] }).audio_cd, no('cdparanoia'), 'no drive known yet: a physical one is assumed');
    assert.deepEqual(discKinds({ capabilities: caps({ ...OPEN, ffmpeg: null }), driveKinds: ['device', 'image'] }).audio_cd, no('ffmpeg'));
  });

  it('a native worker rips nothing, whatever it has; a worker that never reported lacks everything', () => {
    const native = discKinds({ capabilities: caps({ HandBrakeCLI: 'HandBrake 1.8.0', makemkvcon: 'v1' }, 5, true), driveKinds: [] });
    for (const k of Object.values(native)) assert.deepEqual(k, no('native'));
    const unknown: DiscKinds = discKinds({ capabilities: null, driveKinds: [] });
    assert.deepEqual(unknown, { audio_cd: no('abcde'), dvd: no('lsdvd'), dvd_protected: no('lsdvd'), bluray: no('makemkvcon'), uhd: no('makemkvcon') });
  });

  it('takes the drive kinds of the worker from the fleet', () => {
    const drive = (node: string, kind: DriveState['kind']) => ({ name: `${node}-x`, state: { node, kind } as DriveState });
    const fleet = { devices: () => [drive('keller@h', 'image'), drive('other@h', 'device')] };
    assert.deepEqual(workerDiscKinds(fleet, 'keller@h', caps({ ...OPEN, abcde: null })).audio_cd, ok);
    assert.deepEqual(workerDiscKinds(fleet, 'other@h', caps({ ...OPEN, abcde: null })).audio_cd, no('abcde'));
  });
});
