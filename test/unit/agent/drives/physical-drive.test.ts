import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import type { DriveToolPaths } from '../../../../agent/drives/drive-tools.js';
import { describeDrive, DriveError, ejectDrive, listPhysicalDrives, readDriveStatus } from '../../../../agent/drives/physical-drive.js';
import { FIXTURES_DIR } from '../../../fixtures/tools-samples.js';

const FAKE_TOOLS = path.join(FIXTURES_DIR, 'fake-tools');
const tools: DriveToolPaths = {
  lsblk: path.join(FAKE_TOOLS, 'lsblk'),
  udevadm: path.join(FAKE_TOOLS, 'udevadm'),
  python3: path.join(FAKE_TOOLS, 'python3'),
  eject: path.join(FAKE_TOOLS, 'eject'),
  setcd: path.join(FAKE_TOOLS, 'setcd'),
  blockdev: path.join(FAKE_TOOLS, 'blockdev'),
};
const PROC_INFO = path.join(FIXTURES_DIR, 'samples', 'drive-proc-cdrom-info.txt');
const MISSING_TOOL = '/nonexistent/ripwerk-test/tool';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-drives-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

let n = 0;
/** A fresh simulated drive: the state files read by the fake tools (see fake-tools/lib.sh). */
function fakeDrive(settings: Record<string, string>): string {
  const dir = path.join(root, `state-${++n}`);
  fs.mkdirSync(dir);
  for (const [file, value] of Object.entries({ devices: '/dev/sr0\n/dev/sr1\n', ...settings })) fs.writeFileSync(path.join(dir, file), value);
  process.env.FAKE_DRIVE_STATE = dir;
  return dir;
}

/** The tools the fakes saw, in order: "eject -i off /dev/sr0", "python3", ... (python3's script left out). */
function calls(state: string): string[] {
  const file = path.join(state, 'calls');
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => (l.startsWith('python3 ') ? 'python3' : l));
}

/** A clock that moves only when the code under test sleeps. */
function fakeClock(): { now: () => number; sleep: (ms: number) => Promise<void>; sleeps: number[] } {
  let t = 1_000_000;
  const sleeps: number[] = [];
  return {
    now: () => t,
    sleep: async (ms) => {
      sleeps.push(ms);
      t += ms;
    },
    sleeps,
  };
}

/** A /sys/block stand-in with space-padded INQUIRY strings as the kernel writes them. */
function fakeSysBlock(): string {
  const dir = path.join(root, `sys-${++n}`);
  const drive = (name: string, vendor: string, model: string, rev: string): void => {
    fs.mkdirSync(path.join(dir, name, 'device'), { recursive: true });
    fs.writeFileSync(path.join(dir, name, 'device', 'vendor'), `${vendor.padEnd(8)}\n`);
    fs.writeFileSync(path.join(dir, name, 'device', 'model'), `${model.padEnd(16)}\n`);
    fs.writeFileSync(path.join(dir, name, 'device', 'rev'), `${rev.padEnd(4)}\n`);
  };
  drive('sr10', 'PIONEER', 'BD-RW   BDR-S12J', '1.01');
  drive('sr1', 'ASUS', 'BW-16D1HT', '3.10');
  drive('sr0', 'HL-DT-ST', 'BD-RE  WH16NS60', '1.02');
  fs.mkdirSync(path.join(dir, 'loop0'));
  fs.mkdirSync(path.join(dir, 'vda'));
  return dir;
}

describe('listPhysicalDrives', () => {
  it('lists the rom drives lsblk reports', async () => {
    const state = fakeDrive({});
    assert.deepEqual(await listPhysicalDrives({ tools }), [
      { name: 'sr0', path: '/dev/sr0', vendor: 'HL-DT-ST', model: 'BD-RE WH16NS60', revision: null, transport: 'sata' },
      { name: 'sr1', path: '/dev/sr1', vendor: 'ASUS', model: 'BW-16D1HT', revision: null, transport: 'usb' },
    ]);
    assert.deepEqual(calls(state), ['lsblk -J -d -o NAME,TYPE,VENDOR,MODEL,REV,SIZE,TRAN,RM']);
  });

  it('falls back to /sys/block/sr* when lsblk cannot run', async () => {
    fakeDrive({});
    const drives = await listPhysicalDrives({ tools: { ...tools, lsblk: MISSING_TOOL }, sysBlockDir: fakeSysBlock() });
    assert.deepEqual(drives, [
      { name: 'sr0', path: '/dev/sr0', vendor: 'HL-DT-ST', model: 'BD-RE WH16NS60', revision: '1.02', transport: null },
      { name: 'sr1', path: '/dev/sr1', vendor: 'ASUS', model: 'BW-16D1HT', revision: '3.10', transport: null },
      { name: 'sr10', path: '/dev/sr10', vendor: 'PIONEER', model: 'BD-RW BDR-S12J', revision: '1.01', transport: null },
    ]);
  });

  it('finds nothing when neither lsblk nor sysfs know a drive', async () => {
    fakeDrive({});
    assert.deepEqual(await listPhysicalDrives({ tools: { ...tools, lsblk: MISSING_TOOL }, sysBlockDir: path.join(root, 'no-such-sys') }), []);
  });
});

describe('describeDrive', () => {
  it('reads vendor and model from sysfs and the abilities from the cdrom driver table', async () => {
    const state = fakeDrive({});
    const info = await describeDrive('/dev/sr1', { tools, sysBlockDir: fakeSysBlock(), procCdromInfo: PROC_INFO });
    assert.equal(info.name, 'sr1');
    assert.equal(info.path, '/dev/sr1');
    assert.equal(info.vendor, 'ASUS');
    assert.equal(info.model, 'BW-16D1HT');
    assert.equal(info.capabilities?.canCloseTray, false, 'the slim drive of the recorded table');
    assert.equal(info.capabilities?.canOpenTray, true);
    assert.deepEqual(calls(state), [], 'sysfs answered, no tool ran');
  });

  it('asks lsblk when sysfs does not know the drive', async () => {
    const state = fakeDrive({});
    const info = await describeDrive('/dev/sr1', { tools, sysBlockDir: path.join(root, 'no-such-sys'), procCdromInfo: path.join(root, 'no-such-proc') });
    assert.deepEqual(info, { name: 'sr1', path: '/dev/sr1', vendor: 'ASUS', model: 'BW-16D1HT', revision: null, transport: 'usb', capabilities: null });
    assert.deepEqual(calls(state), ['lsblk -J -d -o NAME,TYPE,VENDOR,MODEL,REV,SIZE,TRAN,RM /dev/sr1']);
  });

  it('leaves vendor and model empty for a device nobody knows', async () => {
    fakeDrive({});
    const info = await describeDrive('/dev/sr7', { tools, sysBlockDir: path.join(root, 'no-such-sys'), procCdromInfo: PROC_INFO });
    assert.deepEqual(info, { name: 'sr7', path: '/dev/sr7', vendor: null, model: null, revision: null, transport: null, capabilities: null });
  });
});

describe('readDriveStatus', () => {
  it('reports a DVD with its udev facts and size', async () => {
    const state = fakeDrive({ status: '4', udev: 'drive-udevadm-info-dvd.txt', size: '7838695424' });
    assert.deepEqual(await readDriveStatus('/dev/sr1', { tools }), {
      status: 'disc_present',
      driveStatus: 'disc_present',
      media: { mediaPresent: true, mediaKind: 'dvd', audioTracks: 0, dataTracks: 1, fsLabel: 'MY_MOVIE_2003', fsType: 'udf' },
      sizeBytes: 7838695424,
      problem: null,
    });
    assert.deepEqual(calls(state).sort(), ['blockdev --getsize64 /dev/sr1', 'python3', 'udevadm info --query=property --name=/dev/sr1']);
  });

  it('reports an open tray and does not open the device for its size', async () => {
    const state = fakeDrive({ status: '2', udev: 'drive-udevadm-info-empty.txt' });
    const reading = await readDriveStatus('/dev/sr0', { tools });
    assert.equal(reading.status, 'tray_open');
    assert.equal(reading.media.mediaPresent, false);
    assert.equal(reading.sizeBytes, null);
    assert.ok(!calls(state).some((c) => c.startsWith('blockdev')), 'blockdev opens the node, which could pull an open tray in');
  });

  it('gives no size when blockdev reports the empty-drive default capacity', async () => {
    fakeDrive({ status: '4', udev: 'drive-udevadm-info-bd.txt', size: '1073741312' });
    const reading = await readDriveStatus('/dev/sr0', { tools });
    assert.equal(reading.status, 'disc_present');
    assert.equal(reading.media.mediaKind, 'bluray');
    assert.equal(reading.sizeBytes, null);
  });

  it('keeps the kernel status when udev has not described the disc yet', async () => {
    fakeDrive({ status: '4', udev: 'drive-udevadm-info-empty.txt', size: '700000000' });
    const reading = await readDriveStatus('/dev/sr0', { tools });
    assert.equal(reading.status, 'disc_present');
    assert.equal(reading.media.mediaPresent, false);
  });

  it('reads a not-ready drive as unknown', async () => {
    fakeDrive({ status: '3' });
    const reading = await readDriveStatus('/dev/sr0', { tools });
    assert.equal(reading.status, 'unknown');
    assert.equal(reading.driveStatus, 'not_ready');
    assert.equal(reading.problem, null);
  });

  it('asks setcd when python3 is missing', async () => {
    const state = fakeDrive({ status: '1' });
    const reading = await readDriveStatus('/dev/sr0', { tools: { ...tools, python3: MISSING_TOOL } });
    assert.equal(reading.status, 'no_disc');
    assert.equal(reading.driveStatus, 'no_disc');
    assert.ok(calls(state).includes('setcd -i /dev/sr0'));
  });

  it('falls back to the udev media flag when the kernel status cannot be read', async () => {
    fakeDrive({ status: '4', udev: 'drive-udevadm-info-audio-cd.txt' });
    const reading = await readDriveStatus('/dev/sr0', { tools: { ...tools, python3: MISSING_TOOL, setcd: MISSING_TOOL } });
    assert.equal(reading.status, 'disc_present');
    assert.equal(reading.driveStatus, null);
    assert.equal(reading.media.audioTracks, 12);
    assert.match(reading.problem ?? '', /tool is not installed/);
  });

  it('explains a missing device', async () => {
    fakeDrive({});
    const reading = await readDriveStatus('/dev/sr5', { tools });
    assert.equal(reading.status, 'unknown');
    assert.equal(reading.problem, 'there is no device /dev/sr5');
    assert.equal(reading.media.mediaPresent, false);
  });
});

describe('ejectDrive', () => {
  it('unlocks, ejects and polls until the tray is open', async () => {
    const state = fakeDrive({ status: '4', 'status-after-eject': '2', 'eject-delay-polls': '3', udev: 'drive-udevadm-info-bd.txt', 'udev-after-eject': 'drive-udevadm-info-empty.txt' });
    const clock = fakeClock();
    assert.equal(await ejectDrive('/dev/sr0', { tools, now: clock.now, sleep: clock.sleep }), 'tray_open');
    const seen = calls(state);
    assert.deepEqual(seen.slice(0, 2), ['eject -i off /dev/sr0', 'eject /dev/sr0']);
    assert.equal(seen.filter((c) => c === 'python3').length, 4, 'three reads still see the disc, the fourth the open tray');
    assert.deepEqual(clock.sleeps, [250, 250, 250]);
  });

  it('accepts an empty drive as success for a slot drive', async () => {
    fakeDrive({ status: '4', 'status-after-eject': '1', 'eject-delay-polls': '1', capmask: String(0x2 | 0x4 | 0x800) });
    const clock = fakeClock();
    assert.equal(await ejectDrive('/dev/sr0', { tools, now: clock.now, sleep: clock.sleep }), 'no_disc');
  });

  it('goes on when the drive has no door lock', async () => {
    const state = fakeDrive({ status: '4', lock: 'unsupported', 'status-after-eject': '2' });
    const clock = fakeClock();
    assert.equal(await ejectDrive('/dev/sr0', { tools, now: clock.now, sleep: clock.sleep }), 'tray_open');
    assert.deepEqual(calls(state).slice(0, 2), ['eject -i off /dev/sr0', 'eject /dev/sr0']);
  });

  it('fails with a plain reason when the disc stays in for the whole wait', async () => {
    const state = fakeDrive({ status: '4', udev: 'drive-udevadm-info-bd.txt' });
    const clock = fakeClock();
    const start = clock.now();
    await assert.rejects(ejectDrive('/dev/sr0', { tools, now: clock.now, sleep: clock.sleep }), (err: Error) => {
      assert.ok(err instanceof DriveError);
      assert.equal(err.device, '/dev/sr0');
      assert.match(err.message, /^the disc is still in drive sr0 after eject: the drive still reported a disc 5 s after the eject command/);
      return true;
    });
    assert.equal(clock.now() - start, 5000);
    assert.equal(calls(state).filter((c) => c === 'python3').length, 21, 'a read every 250 ms from 0 to 5 s');
  });

  it('fails when the drive stays not ready', async () => {
    fakeDrive({ status: '4', 'status-after-eject': '3' });
    const clock = fakeClock();
    await assert.rejects(ejectDrive('/dev/sr0', { tools, now: clock.now, sleep: clock.sleep, waitMs: 1000 }), {
      message: 'the disc may still be in drive sr0 after eject: within 1 s the drive reported neither an open tray nor an empty drive (it kept reporting "not ready")',
    });
  });

  it('reports another program holding the drive', async () => {
    const state = fakeDrive({ status: '4', eject: 'busy' });
    await assert.rejects(ejectDrive('/dev/sr1', { tools }), {
      name: 'DriveError',
      message: 'could not eject drive sr1: another program is using /dev/sr1; close it (or wait until it is done) and try again',
    });
    assert.ok(!calls(state).includes('python3'), 'no status polling after a refused eject');
  });

  it('reports a missing device after the unlock step', async () => {
    const state = fakeDrive({});
    await assert.rejects(ejectDrive('/dev/sr9', { tools }), { message: 'could not eject drive sr9: there is no device /dev/sr9' });
    assert.deepEqual(calls(state), ['eject -i off /dev/sr9']);
  });

  it('reports a missing eject program', async () => {
    fakeDrive({ status: '4' });
    await assert.rejects(ejectDrive('/dev/sr0', { tools: { ...tools, eject: MISSING_TOOL } }), { message: `could not eject drive sr0: tool is not installed (looked for ${MISSING_TOOL})` });
  });
});
