import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { parseCdInfoToc } from '../../../../agent/cd/cd-info.js';
import { MAX_DISC_FRAMES, SESSION_GAP_FRAMES } from '../../../../agent/cd/cd-toc.js';
import { readDriveCdIdentity } from '../../../../agent/cd/drive-cd-identity.js';
import { readImageDrive } from '../../../../agent/disc/image-drive.js';
import { sampleText as sample } from '../../../fixtures/tools-samples.js';

/**
 * Our MusicBrainz disc ids against libdiscid itself (Debian libdiscid-dev), for every TOC layout a
 * CD can have: audio only, a mixed-mode CD (data track 1), a data track between audio tracks, an
 * enhanced CD (data track in a second session) and a lead-out past the longest disc. libdiscid reads
 * the TOC from a drive with two ioctls (CDROMREADTOCHDR, CDROMREADTOCENTRY); the small C program
 * below defines `ioctl` itself, so libdiscid's own discid_read applies its own rules (src/toc.c) to
 * the layout we hand it, without a drive. discid_put is the check for a TOC given as numbers.
 * Our side reads the same layouts as a drive (cdparanoia -Q and cd-info stand-ins) and as cue/bin
 * images (sparse .bin files: only their size counts).
 */

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-discid-ref-'));
after(() => fs.rmSync(work, { recursive: true, force: true }));

const LIBDISCID_C = `#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <linux/cdrom.h>
#include <discid/discid.h>
/* The TOC libdiscid reads through ioctl: argv "first last leadout" then A<lba> or D<lba> per track. */
static int first, last, leadout, lba[100], data[100];
int ioctl(int fd, unsigned long req, ...) {
  va_list ap; va_start(ap, req); void *arg = va_arg(ap, void *); va_end(ap);
  (void) fd;
  if (req == CDROMREADTOCHDR) { struct cdrom_tochdr *h = arg; h->cdth_trk0 = first; h->cdth_trk1 = last; return 0; }
  if (req == CDROMREADTOCENTRY) {
    struct cdrom_tocentry *e = arg; int t = e->cdte_track;
    e->cdte_format = CDROM_LBA; e->cdte_adr = 1;
    if (t == CDROM_LEADOUT) { e->cdte_addr.lba = leadout; e->cdte_ctrl = 0; return 0; }
    e->cdte_addr.lba = lba[t]; e->cdte_ctrl = data[t] ? CDROM_DATA_TRACK : 0; return 0;
  }
  return -1;
}
int main(int argc, char **argv) {
  DiscId *d = discid_new();
  int ok;
  if (argc > 1 && strcmp(argv[1], "put") == 0) { /* put first last leadout offsets... (+150 included) */
    int offsets[100] = {0}, f = atoi(argv[2]);
    offsets[0] = atoi(argv[4]);
    for (int i = 5; i < argc; i++) offsets[f + i - 5] = atoi(argv[i]);
    ok = discid_put(d, f, atoi(argv[3]), offsets);
  } else {
    first = atoi(argv[1]); last = atoi(argv[2]); leadout = atoi(argv[3]);
    for (int i = 4; i < argc && first + i - 4 < 100; i++) { data[first + i - 4] = argv[i][0] == 'D'; lba[first + i - 4] = atoi(argv[i] + 1); }
    ok = discid_read_sparse(d, "/dev/null", 0);
  }
  if (!ok) { printf("error: %s\\n", discid_get_error_msg(d)); return 0; }
  printf("%s|%s\\n", discid_get_id(d), discid_get_toc_string(d));
  discid_free(d);
  return 0;
}
`;

let tool: string | null = null;
function libdiscid(args: string[]): { id: string; toc: string } | { error: string } {
  if (!tool) {
    const src = path.join(work, 'discid-toc.c');
    fs.writeFileSync(src, LIBDISCID_C);
    tool = path.join(work, 'discid-toc');
    execFileSync('cc', ['-rdynamic', '-o', tool, src, '-ldiscid']);
  }
  const out = execFileSync(tool, args, { encoding: 'utf8' }).trim();
  if (out.startsWith('error: ')) return { error: out.slice(7) };
  const [id, toc] = out.split('|');
  return { id, toc };
}

interface Layout {
  name: string;
  tracks: { lba: number; audio: boolean }[];
  leadout: number;
}

/** libdiscid reading the layout from a "drive". */
const fromDrive = (l: Layout) => libdiscid(['1', String(l.tracks.length), String(l.leadout), ...l.tracks.map((t) => `${t.audio ? 'A' : 'D'}${t.lba}`)]);

const msf = (lba: number): string => {
  const f = lba + 150;
  return [Math.floor(f / 4500), Math.floor(f / 75) % 60, f % 75].map((n) => String(n).padStart(2, '0')).join(':');
};
const mmss = (frames: number): string => `${String(Math.floor(frames / 4500)).padStart(2, '0')}:${String(Math.floor(frames / 75) % 60).padStart(2, '0')}.${String(frames % 75).padStart(2, '0')}`;

/** `cdparanoia -Q` for the layout: audio tracks only, each as long as up to the next track of any kind. */
function paranoiaQ(l: Layout): string {
  const rows = l.tracks.flatMap((t, i) => {
    if (!t.audio) return [];
    const end = l.tracks[i + 1]?.lba ?? l.leadout;
    return [`${String(i + 1).padStart(3)}.  ${String(end - t.lba).padStart(7)} [${mmss(end - t.lba)}]  ${String(t.lba).padStart(7)} [${mmss(t.lba)}]    no   no  2`];
  });
  return ['cdparanoia III release 10.2 (September 11, 2008)', '', 'Table of contents (audio tracks only):', 'track        length               begin        copy pre ch', '===========================================================', ...rows, ''].join('\n');
}

/** cd-info's track list for the layout (the format of test/fixtures/samples/cd-info-*.txt). */
function cdInfo(l: Layout): string {
  const rows = l.tracks.map((t, i) => `${String(i + 1).padStart(3)}: ${msf(t.lba)}  ${String(t.lba).padStart(6, '0')} ${(t.audio ? 'audio' : i === l.tracks.length - 1 ? 'XA' : 'data').padEnd(6)} false  no   ${t.audio ? ' 2        no' : ''}`);
  return [`CD-ROM Track List (1 - ${l.tracks.length})`, '  #: MSF       LSN    Type   Green? Copy? Channels Premphasis?', ...rows, `170: ${msf(l.leadout)}  ${String(l.leadout).padStart(6, '0')} leadout (1 MB raw, 1 MB formatted)`, 'Media Catalog Number (MCN): not available', ''].join('\n');
}

/** Stand-ins for cdparanoia and cd-info printing the layout; the disc as Ripwerk reads it from a drive. */
async function ripwerkFromDrive(l: Layout, withCdInfo = true) {
  const dir = fs.mkdtempSync(path.join(work, 'drive-'));
  fs.writeFileSync(path.join(dir, 'q.txt'), paranoiaQ(l));
  fs.writeFileSync(path.join(dir, 'info.txt'), cdInfo(l));
  fs.writeFileSync(path.join(dir, 'cdparanoia'), `#!/bin/sh\ncat '${dir}/q.txt' >&2\n`, { mode: 0o755 });
  fs.writeFileSync(path.join(dir, 'cd-info'), `#!/bin/sh\ncat '${dir}/info.txt'\n`, { mode: 0o755 });
  return readDriveCdIdentity('/dev/sr0', { cdparanoia: path.join(dir, 'cdparanoia'), cdInfo: path.join(dir, withCdInfo ? 'cd-info' : 'no-cd-info') });
}

/**
 * The layout as a cue/bin image: every track in one sparse .bin at its LBA, except a trailing data
 * track, which a rip of an enhanced CD writes right after the audio (the session gap is not in it).
 */
async function ripwerkFromImage(l: Layout) {
  const dir = fs.mkdtempSync(path.join(work, 'image-'));
  const lastAudio = l.tracks.map((t) => t.audio).lastIndexOf(true);
  const inFile = (i: number): number => (i > lastAudio ? l.tracks[i].lba - SESSION_GAP_FRAMES : l.tracks[i].lba);
  const cue = ['FILE "disc.bin" BINARY', ...l.tracks.flatMap((t, i) => [`  TRACK ${String(i + 1).padStart(2, '0')} ${t.audio ? 'AUDIO' : 'MODE1/2352'}`, `    INDEX 01 ${msf(inFile(i) - 150)}`])];
  fs.writeFileSync(path.join(dir, 'disc.cue'), `${cue.join('\n')}\n`);
  const end = lastAudio < l.tracks.length - 1 ? l.leadout - SESSION_GAP_FRAMES : l.leadout;
  fs.closeSync(fs.openSync(path.join(dir, 'disc.bin'), 'w'));
  fs.truncateSync(path.join(dir, 'disc.bin'), end * 2352);
  return (await readImageDrive(dir))?.disc.audio_cd ?? null;
}

const audio = (...lbas: number[]) => lbas.map((lba) => ({ lba, audio: true }));
const LAYOUTS: Layout[] = [
  { name: 'audio only (the test image)', tracks: audio(0, 375, 940), leadout: 1175 },
  { name: 'mixed mode: data track 1, audio 2-9', tracks: [{ lba: 0, audio: false }, ...audio(18000, 33000, 51000, 70000, 88000, 101000, 119000, 136000)], leadout: 152000 },
  { name: 'a data track between audio tracks (3 of 5)', tracks: [...audio(0, 10000), { lba: 20000, audio: false }, ...audio(30000, 40000)], leadout: 50000 },
  { name: 'enhanced CD: audio 1-9, data track 10 in a second session', tracks: [...audio(0, 17000, 35000, 52000, 70000, 87000, 105000, 122000, 140000), { lba: 157000 + SESSION_GAP_FRAMES, audio: false }], leadout: 157000 + SESSION_GAP_FRAMES + 30000 },
];

describe('MusicBrainz disc ids against libdiscid for every TOC layout', () => {
  for (const layout of LAYOUTS) {
    it(`gives libdiscid's disc id and TOC from a drive and from a cue/bin image: ${layout.name}`, async () => {
      const reference = fromDrive(layout);
      assert.ok('id' in reference, JSON.stringify(reference));
      const drive = await ripwerkFromDrive(layout);
      assert.deepEqual([drive?.musicbrainz_disc_id, drive?.toc], [reference.id, reference.toc], 'drive (cdparanoia -Q and cd-info)');
      const image = await ripwerkFromImage(layout);
      assert.deepEqual([image?.musicbrainz_disc_id, image?.toc], [reference.id, reference.toc], 'cue/bin image');
      assert.equal(reference.toc.split(' ')[0], '1', 'MusicBrainz takes only TOCs that start at track 1');
      console.log(`${layout.name}: libdiscid ${reference.id} (${reference.toc.split(' ').slice(0, 3).join(' ')} …), ours ${drive?.musicbrainz_disc_id}`);
    });
  }

  it('pieces the TOC of a mixed-mode CD and of a data track between audio tracks together from cdparanoia -Q alone', async () => {
    for (const layout of LAYOUTS.slice(0, 3)) {
      const reference = fromDrive(layout);
      const drive = await ripwerkFromDrive(layout, false);
      assert.deepEqual([drive?.musicbrainz_disc_id, drive?.toc], ['id' in reference ? reference.id : null, 'id' in reference ? reference.toc : null], layout.name);
    }
  });

  it('puts an enhanced image\'s lead-out where its audio ends: 157150, not the end of the .bin (187150)', async () => {
    const image = await ripwerkFromImage(LAYOUTS[3]);
    assert.equal(image?.toc?.split(' ')[2], '157150');
  });

  it('gives no disc id for a lead-out past the longest disc, which libdiscid refuses', async () => {
    assert.equal(MAX_DISC_FRAMES, 405000);
    const long: Layout = { name: 'past 90 minutes', tracks: audio(0, 200000, 400000), leadout: 405000 };
    assert.deepEqual(libdiscid(['put', '1', '3', String(long.leadout + 150), '150', '200150', '400150']), { error: 'Disc too long' });
    assert.ok('id' in libdiscid(['put', '1', '3', String(MAX_DISC_FRAMES), '150', '200150', '400150']), 'exactly the longest disc is taken');
    const image = await ripwerkFromImage(long);
    assert.deepEqual([image?.musicbrainz_disc_id, image?.toc], [null, null]);
    const drive = await ripwerkFromDrive(long);
    assert.deepEqual([drive?.musicbrainz_disc_id, drive?.toc], [null, null]);
  });
});

describe('cd-info track list (real captures of constructed images)', () => {
  it('reads data tracks, their LSNs and the lead-out of a mixed-mode and an enhanced image', () => {
    assert.deepEqual(parseCdInfoToc(sample('cd-info-mixed-mode.txt')), { tracks: [{ number: 1, lba: 0, audio: false }, { number: 2, lba: 750, audio: true }, { number: 3, lba: 1500, audio: true }], leadout: 2000 });
    assert.deepEqual(parseCdInfoToc(sample('cd-info-enhanced.txt')), { tracks: [{ number: 1, lba: 0, audio: true }, { number: 2, lba: 750, audio: true }, { number: 3, lba: 1500, audio: false }], leadout: 3000 });
    assert.equal(parseCdInfoToc(sample('cd-info-cue-image.txt'))?.leadout, 1175);
    assert.equal(parseCdInfoToc('CD Analysis Report\n'), null);
  });
});

// The C compiler and libdiscid-dev come with the test packages (scripts/deps.sh, .ci/run).
if (spawnSync('cc', ['--version']).status !== 0) throw new Error('cc is missing: install build-essential');
