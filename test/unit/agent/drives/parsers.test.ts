import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { blockdevError, EMPTY_DRIVE_BYTES, parseBlockdevSize } from '../../../../agent/drives/blockdev-parser.js';
import { capabilitiesFromMask, cdromStatusError, cdromStatusName, parseCdromStatusLine } from '../../../../agent/drives/cdrom-status-parser.js';
import { cleanDriveText } from '../../../../agent/drives/drive-text.js';
import { classifyEjectError } from '../../../../agent/drives/eject-parser.js';
import { lsblkError, parseLsblkJson } from '../../../../agent/drives/lsblk-parser.js';
import { parseProcCdromInfo } from '../../../../agent/drives/proc-cdrom-parser.js';
import { parseSetcdInfo, setcdError } from '../../../../agent/drives/setcd-parser.js';
import { isUdevCdrom, NO_MEDIA, parseUdevProperties, summarizeMedia, udevadmError } from '../../../../agent/drives/udev-parser.js';
import { sampleLines, sampleText } from '../../../fixtures/tools-samples.js';

interface Capture {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/** One command of a capture file (drive-tool-errors*.txt): lines "stdout| ..." / "stderr| ..." up to "[exit N]". */
function capture(file: string, command: string): Capture {
  const lines = sampleLines(file);
  const start = lines.indexOf(`$ ${command}`);
  if (start === -1) throw new Error(`"${command}" is not in ${file}`);
  const out: string[] = [];
  const err: string[] = [];
  for (const line of lines.slice(start + 1)) {
    const exit = /^\[exit (\d+)\]$/.exec(line);
    if (exit) return { stdout: out.map((l) => `${l}\n`).join(''), stderr: err.map((l) => `${l}\n`).join(''), exitCode: Number(exit[1]) };
    if (line.startsWith('stdout|')) out.push(line.slice('stdout| '.length));
    if (line.startsWith('stderr|')) err.push(line.slice('stderr| '.length));
  }
  throw new Error(`"${command}" in ${file} has no exit line`);
}

/** A constructed sample without its "#" header lines, as the real tool prints it. */
function udevSample(name: string): Map<string, string> {
  return parseUdevProperties(
    sampleLines(name)
      .filter((l) => !l.startsWith('#'))
      .join('\n'),
  );
}

const ONE_LINER = `python3 -c 'import os,fcntl,sys;fd=os.open(sys.argv[1],os.O_RDONLY|os.O_NONBLOCK);print(fcntl.ioctl(fd,0x5326,0x7fffffff),fcntl.ioctl(fd,0x5331,0))'`;

describe('drive text', () => {
  it('trims the space padding of INQUIRY strings and collapses inner runs', () => {
    assert.equal(cleanDriveText('ASUS    '), 'ASUS');
    assert.equal(cleanDriveText('BD-RE  WH16NS60'), 'BD-RE WH16NS60');
    assert.equal(cleanDriveText('HL-DT-ST\n'), 'HL-DT-ST');
    assert.equal(cleanDriveText('   '), null);
    assert.equal(cleanDriveText(null), null);
  });
});

describe('lsblk parser', () => {
  it('lists the rom drives of the recorded two-drive listing with cleaned strings', () => {
    assert.deepEqual(parseLsblkJson(sampleText('drive-lsblk.json')), [
      { name: 'sr0', path: '/dev/sr0', vendor: 'HL-DT-ST', model: 'BD-RE WH16NS60', revision: null, transport: 'sata' },
      { name: 'sr1', path: '/dev/sr1', vendor: 'ASUS', model: 'BW-16D1HT', revision: null, transport: 'usb' },
    ]);
  });

  it('finds no drive in a real listing of a machine without optical drives', () => {
    const listing = capture('drive-tool-errors-local.txt', 'lsblk -J -d -o NAME,TYPE,VENDOR,MODEL,REV,SIZE,TRAN,RM');
    assert.equal(listing.exitCode, 0);
    assert.deepEqual(parseLsblkJson(listing.stdout), []);
  });

  it('reads the empty list and the error of an unknown device', () => {
    const missing = capture('drive-tool-errors.txt', 'lsblk -J -d -o NAME,TYPE,VENDOR,MODEL,SIZE,TRAN,RM /dev/sr0');
    assert.equal(missing.exitCode, 32);
    assert.deepEqual(parseLsblkJson(missing.stdout), []);
    assert.equal(lsblkError(missing.stderr, missing.exitCode), '/dev/sr0 is not a block device (no such drive)');
  });

  it('refuses text that is not a device list', () => {
    assert.throws(() => parseLsblkJson('lsblk: unknown column: REVX'), /no device list/);
    assert.throws(() => parseLsblkJson('{"devices":[]}'), /no device list/);
    assert.equal(lsblkError('lsblk: unknown column: REVX\n', 1), 'lsblk failed (exit code 1): unknown column: REVX');
  });
});

describe('udev parser', () => {
  it('summarizes a pressed Blu-ray', () => {
    const props = udevSample('drive-udevadm-info-bd.txt');
    assert.equal(props.get('ID_CDROM_MEDIA_BD'), '1');
    assert.equal(props.get('DEVLINKS')?.split(' ').length, 5, 'a value keeps its spaces');
    assert.equal(isUdevCdrom(props), true);
    assert.deepEqual(summarizeMedia(props), { mediaPresent: true, mediaKind: 'bluray', audioTracks: 0, dataTracks: 1, fsLabel: 'MY_MOVIE_2003', fsType: 'udf' });
  });

  it('summarizes a DVD whose drive can also read BD (drive flags are not disc flags)', () => {
    const props = udevSample('drive-udevadm-info-dvd.txt');
    assert.equal(props.get('ID_CDROM_BD'), '1');
    assert.deepEqual(summarizeMedia(props), { mediaPresent: true, mediaKind: 'dvd', audioTracks: 0, dataTracks: 1, fsLabel: 'MY_MOVIE_2003', fsType: 'udf' });
  });

  it('summarizes an audio CD without any ID_FS_ keys', () => {
    assert.deepEqual(summarizeMedia(udevSample('drive-udevadm-info-audio-cd.txt')), {
      mediaPresent: true,
      mediaKind: 'cd',
      audioTracks: 12,
      dataTracks: 0,
      fsLabel: null,
      fsType: null,
    });
  });

  it('reports no media for an empty drive', () => {
    const props = udevSample('drive-udevadm-info-empty.txt');
    assert.equal(props.get('SYSTEMD_READY'), '0');
    assert.equal(isUdevCdrom(props), true);
    assert.deepEqual(summarizeMedia(props), NO_MEDIA);
  });

  it('reads the "E: " lines of plain udevadm info and skips the P:/N:/S: lines', () => {
    const props = parseUdevProperties('P: /devices/virtual/block/loop0\nN: loop0\nS: disk/by-id/x\nE: DEVNAME=/dev/loop0\nE: MAJOR=7\n');
    assert.deepEqual([...props], [
      ['DEVNAME', '/dev/loop0'],
      ['MAJOR', '7'],
    ]);
    assert.equal(isUdevCdrom(props), false);
  });

  it('names the missing device of the recorded error', () => {
    const missing = capture('drive-tool-errors.txt', 'udevadm info --query=property --name=/dev/sr0');
    assert.equal(missing.exitCode, 1);
    assert.equal(udevadmError(missing.stderr, missing.exitCode), 'there is no device /dev/sr0');
  });
});

describe('cdrom status parser', () => {
  it('reads status and capability mask', () => {
    const open = parseCdromStatusLine('2 3930607\n');
    assert.ok(open);
    assert.equal(open.status, 'tray_open');
    assert.deepEqual(open.capabilities, {
      mask: 3930607,
      canCloseTray: true,
      canOpenTray: true,
      canLockTray: true,
      canSelectSpeed: true,
      canSelectDisc: false,
      reportsMediaChanged: true,
      reportsDriveStatus: true,
      canPlayAudio: true,
      canReadDvd: true,
    });
    assert.equal(parseCdromStatusLine('4 0')?.status, 'disc_present');
    assert.equal(capabilitiesFromMask(0x2 | 0x4).canCloseTray, false, 'a slim or slot drive cannot close a tray');
  });

  it('names all kernel status codes', () => {
    assert.deepEqual([0, 1, 2, 3, 4, 7].map(cdromStatusName), ['no_info', 'no_disc', 'tray_open', 'not_ready', 'disc_present', 'no_info']);
  });

  it('refuses other output', () => {
    assert.equal(parseCdromStatusLine(''), null);
    assert.equal(parseCdromStatusLine('4'), null);
    assert.equal(parseCdromStatusLine('-1 0'), null);
  });

  it('turns the recorded python errors into plain reasons', () => {
    const cases: Array<[string, string]> = [
      ['/dev/sr0', 'there is no device /dev/sr0'],
      ['/dev/null', '/dev/null is not an optical drive'],
      ['/dev/loop0', '/dev/loop0 is not an optical drive'],
      ['/dev/vda', 'the agent is not allowed to open /dev/vda (it needs to run as root or in the cdrom group)'],
    ];
    for (const [device, reason] of cases) {
      const run = capture('drive-tool-errors-local.txt', `${ONE_LINER} ${device}`);
      assert.equal(run.exitCode, 1);
      assert.equal(cdromStatusError(run.stderr, run.exitCode, device), reason);
    }
    assert.equal(cdromStatusError('Segmentation fault\n', 139, '/dev/sr0'), 'python3 could not read the status of /dev/sr0 (exit code 139)');
  });
});

describe('setcd parser', () => {
  it('reads each drive status text', () => {
    assert.deepEqual(parseSetcdInfo('/dev/sr0:\n  No disc is inserted\n'), { status: 'no_disc', discType: null, volumeName: null });
    assert.equal(parseSetcdInfo('/dev/sr0:\n  CD tray is open\n')?.status, 'tray_open');
    assert.equal(parseSetcdInfo('/dev/sr0:\n  Drive is not ready\n')?.status, 'not_ready');
    assert.equal(parseSetcdInfo('/dev/sr0:\n  No information on drive status is available\n')?.status, 'no_info');
  });

  it('reads the disc type and the volume name of a disc that is in', () => {
    assert.deepEqual(parseSetcdInfo('/dev/sr0:\n  Disc found in drive: data disc type 1\n    Volume name: MY_MOVIE_2003\n'), {
      status: 'disc_present',
      discType: 'data',
      volumeName: 'MY_MOVIE_2003',
    });
    assert.deepEqual(parseSetcdInfo('/dev/sr0:\n  Disc found in drive: audio disc\n'), { status: 'disc_present', discType: 'audio', volumeName: null });
    assert.equal(parseSetcdInfo('/dev/sr0:\n  Disc found in drive: XA data disc type 2\n')?.discType, 'data');
    assert.equal(parseSetcdInfo('/dev/sr0:\n  Disc found in drive: mixed type CD (data/audio)\n')?.discType, 'mixed');
  });

  it('finds no status in the recorded failures and names their reasons', () => {
    const missing = capture('drive-tool-errors.txt', 'setcd -i /dev/sr0');
    assert.equal(missing.exitCode, 254);
    assert.equal(parseSetcdInfo(missing.stdout), null);
    assert.equal(setcdError(missing.stderr, missing.exitCode, '/dev/sr0'), 'there is no device /dev/sr0');
    const loop = capture('drive-tool-errors-local.txt', 'setcd -i /dev/loop0');
    assert.equal(loop.exitCode, 248);
    assert.equal(parseSetcdInfo(loop.stdout), null, 'the "/dev/loop0:" heading alone is no status');
    assert.equal(setcdError(loop.stderr, loop.exitCode, '/dev/loop0'), '/dev/loop0 is not an optical drive');
  });
});

describe('/proc/sys/dev/cdrom/info parser', () => {
  it('reads one column per drive, newest first', () => {
    const drives = parseProcCdromInfo(sampleText('drive-proc-cdrom-info.txt'));
    assert.deepEqual(
      drives.map((d) => [d.name, d.speed, d.slots, d.canCloseTray, d.canOpenTray, d.canLockTray, d.canReadDvd, d.canWriteCdR, d.canWriteRam]),
      [
        ['sr1', 51, 1, false, true, true, false, false, true],
        ['sr0', 40, 1, true, true, true, true, true, true],
      ],
    );
    assert.equal(drives[0].canSelectDisk, false);
    assert.equal(drives[1].reportsMediaChanged, true);
  });

  it('gives no drives for text without a drive name row', () => {
    assert.deepEqual(parseProcCdromInfo('CD-ROM information, Id: cdrom.c 3.20 2003/12/17\n\n'), []);
  });
});

describe('blockdev parser', () => {
  it('reads a disc size and rejects the empty-drive default', () => {
    assert.equal(parseBlockdevSize('46548828160\n'), 46548828160);
    assert.equal(EMPTY_DRIVE_BYTES, 2097151 * 512);
    assert.equal(parseBlockdevSize(`${EMPTY_DRIVE_BYTES}\n`), null);
    assert.equal(parseBlockdevSize('0\n'), null);
    assert.equal(parseBlockdevSize(''), null);
  });

  it('names the recorded failures', () => {
    const missing = capture('drive-tool-errors.txt', 'blockdev --getsize64 /dev/sr0');
    assert.equal(blockdevError(missing.stderr, missing.exitCode, '/dev/sr0'), 'there is no device /dev/sr0');
    const file = capture('drive-tool-errors-local.txt', 'blockdev --getsize64 /tmp/ripwerk-regular-file');
    assert.equal(file.exitCode, 1);
    assert.equal(blockdevError(file.stderr, file.exitCode, '/tmp/ripwerk-regular-file'), '/tmp/ripwerk-regular-file is not a block device');
  });
});

describe('eject parser', () => {
  it('recognises the recorded missing-device answers of eject and eject -i off', () => {
    for (const command of ['eject -v /dev/sr0', 'eject -v -i off /dev/sr0', 'eject -n /dev/sr0']) {
      const run = capture('drive-tool-errors.txt', command);
      assert.equal(run.exitCode, 1);
      assert.deepEqual(classifyEjectError(run.stderr, run.exitCode, '/dev/sr0'), { kind: 'no_device', reason: 'there is no device /dev/sr0' });
    }
  });

  it('recognises another opener, a drive without lock and other failures', () => {
    const busy = classifyEjectError('eject: cannot open /dev/sr1: Device or resource busy\n', 1, '/dev/sr1');
    assert.equal(busy.kind, 'busy');
    assert.match(busy.reason, /another program is using \/dev\/sr1/);
    assert.equal(classifyEjectError('eject: cannot open /dev/sr1: Resource busy\n', 1, '/dev/sr1').kind, 'busy', 'musl wording');
    assert.equal(classifyEjectError('eject: other users have the drive open and not CAP_SYS_ADMIN\n', 1, '/dev/sr0').kind, 'busy');
    assert.deepEqual(classifyEjectError('eject: CD-ROM door lock is not supported\n', 1, '/dev/sr0'), { kind: 'lock_unsupported', reason: '/dev/sr0 has no door lock' });
    assert.deepEqual(classifyEjectError('eject: cannot open /dev/sr0: Permission denied\n', 1, '/dev/sr0'), {
      kind: 'failed',
      reason: 'the agent is not allowed to open /dev/sr0 (it needs to run as root or in the cdrom group)',
    });
    assert.deepEqual(classifyEjectError('eject: unable to eject\n', 1, '/dev/sr0'), { kind: 'failed', reason: 'the eject command failed: unable to eject' });
    assert.deepEqual(classifyEjectError('', 1, '/dev/sr0'), { kind: 'failed', reason: 'the eject command failed (exit code 1)' });
  });
});
