import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { Fleet, PING_STALE_MS, STATUS_STORE_EVERY_MS } from '../../../../coordinator/workers/fleet.js';
import { DEFAULT_CAPABILITY_PING_SECONDS } from '../../../../shared/config.js';
import { coordinatorMigrations } from '../../../../coordinator/db/migrations.js';
import type { AgentStatus, Capabilities, DriveState } from '../../../../shared/protocol.js';
import { openDatabase, type Db } from '../../../../shared/sqlite.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-fleet-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

let n = 0;
function db(): Db {
  return openDatabase(path.join(root, `f-${++n}.sqlite`), coordinatorMigrations);
}

const caps: Capabilities = { encoders: ['x264'], tools: { HandBrakeCLI: '1.6.1' }, key_source: 'makemkv', schluessel: 1, rip_backend: 'makemkv', transcode_only: false, native: false };

function online(node: string, extra: Partial<AgentStatus> = {}): AgentStatus {
  return { node, state: 'online', host: 'host-1', ip: '10.0.0.5', slots: 2, tasks: [], capabilities: caps, ...extra };
}

function drive(node: string, name: string): DriveState {
  return { node, drive: name, kind: 'image', path: `/images/${name}`, vendor: null, model: null, status: 'no_disc', disc: null };
}

interface WorkerRow {
  node: string;
  name: string;
  host: string | null;
  ip: string | null;
  online: number;
  status: string | null;
  capabilities: string | null;
}

const workerRow = (d: Db, node: string) => d.prepare<[string], WorkerRow>('SELECT node, name, host, ip, online, status, capabilities FROM workers WHERE node = ?').get(node);

describe('Fleet.applyStatus', () => {
  it('takes a new worker online and stores it', () => {
    const d = db();
    const fleet = new Fleet(d);
    const { wasOnline, entry } = fleet.applyStatus(online('kitchen@abc', { name: 'Kitchen' }));
    assert.equal(wasOnline, false);
    assert.equal(entry.online, true);
    assert.equal(entry.name, 'kitchen');
    assert.equal(entry.offlineSince, null);
    assert.equal(entry.status?.slots, 2);
    assert.deepEqual(
      fleet.online().map((a) => a.node),
      ['kitchen@abc'],
    );
    const r = workerRow(d, 'kitchen@abc');
    assert.equal(r?.online, 1);
    assert.equal(r?.name, 'kitchen');
    assert.equal(r?.ip, '10.0.0.5');
    assert.deepEqual(JSON.parse(r?.capabilities ?? 'null'), caps);
  });

  it('reports the previous state on every transition and keeps the last online status when going offline', () => {
    const d = db();
    const fleet = new Fleet(d);
    fleet.applyStatus(online('w1@h', { slots: 3 }));
    assert.equal(fleet.applyStatus(online('w1@h', { slots: 3 })).wasOnline, true);

    const before = Date.now();
    const off = fleet.applyStatus({ node: 'w1@h', state: 'offline' });
    assert.equal(off.wasOnline, true);
    assert.equal(off.entry.online, false);
    assert.ok(off.entry.offlineSince !== null && off.entry.offlineSince >= before);
    assert.equal(off.entry.status?.slots, 3, 'the last online status is kept');
    assert.deepEqual(fleet.online(), []);
    const r = workerRow(d, 'w1@h');
    assert.equal(r?.online, 0);
    assert.equal(r?.host, 'host-1', 'an offline message (the last will) does not wipe what is known');
    assert.equal((JSON.parse(r?.status ?? 'null') as AgentStatus | null)?.slots, 3);

    const since = off.entry.offlineSince;
    const again = fleet.applyStatus({ node: 'w1@h', state: 'offline' });
    assert.equal(again.wasOnline, false);
    assert.equal(again.entry.offlineSince, since, 'a repeated offline message keeps the time it went offline');

    const back = fleet.applyStatus(online('w1@h'));
    assert.equal(back.wasOnline, false);
    assert.equal(back.entry.online, true);
    assert.equal(back.entry.offlineSince, null);
  });

  it('records a worker first heard of as offline with the time', () => {
    const fleet = new Fleet(db());
    const { wasOnline, entry } = fleet.applyStatus({ node: 'cellar@xyz', state: 'offline' });
    assert.equal(wasOnline, false);
    assert.equal(entry.online, false);
    assert.equal(entry.name, 'cellar');
    assert.notEqual(entry.offlineSince, null);
  });

  it('names a worker after its node (its credential), the part before @, whatever name its status gives', () => {
    const fleet = new Fleet(db());
    assert.equal(fleet.applyStatus(online('attic@1234')).entry.name, 'attic');
    assert.equal(fleet.applyStatus(online('attic@1234', { name: 'Dachboden' })).entry.name, 'attic');
    assert.equal(fleet.applyStatus(online('mallory', { name: 'attic' })).entry.name, 'mallory', "another worker's name in a status takes nothing over");
  });

  it('gives a node whose short name another node has already its whole node, so no two workers share a name or a device', () => {
    const d = db();
    const fleet = new Fleet(d);
    fleet.applyStatus(online('keller'));
    fleet.applyDrive(drive('keller', 'sr0'));
    assert.equal(fleet.applyStatus(online('keller@evil')).entry.name, 'keller@evil');
    assert.equal(fleet.deviceName({ node: 'keller@evil', drive: 'sr0' }), 'keller@evil-sr0');
    assert.equal(fleet.applyDrive(drive('keller@evil', 'sr0'))?.name, 'keller@evil-sr0');
    // A worker named so that its device name is another worker's: the first one keeps it.
    fleet.applyStatus(online('keller-drive'));
    assert.equal(fleet.applyDrive(drive('keller-drive', 'sr0'))?.name, 'keller-drive-sr0');
    assert.equal(fleet.applyDrive(drive('keller', 'drive-sr0')), null);
    assert.equal(fleet.device('keller-drive-sr0')?.state.node, 'keller-drive', 'no overwrite');
    assert.equal(new Fleet(d).get('keller@evil')?.name, 'keller@evil', 'the names survive a restart');
  });

  it('markOffline takes an online worker offline once', () => {
    const d = db();
    const fleet = new Fleet(d);
    fleet.applyStatus(online('w@h'));
    fleet.markOffline('w@h');
    const e = fleet.get('w@h');
    assert.equal(e?.online, false);
    assert.notEqual(e?.offlineSince, null);
    assert.equal(workerRow(d, 'w@h')?.online, 0);
    fleet.markOffline('unknown@h');
    assert.equal(fleet.get('unknown@h'), undefined);
  });
});

describe('Fleet devices', () => {
  it('names a device <worker>-<drive> and lists devices by name', () => {
    const fleet = new Fleet(db());
    fleet.applyStatus(online('kitchen@abc', { name: 'Kitchen' }));
    const dev = fleet.applyDrive(drive('kitchen@abc', 'sr0'));
    assert.equal(dev?.name, 'kitchen-sr0');
    fleet.applyDrive(drive('kitchen@abc', 'image0'));
    fleet.applyDrive(drive('attic@zz', 'sr1'));
    assert.deepEqual(
      fleet.devices().map((d) => d.name),
      ['attic-sr1', 'kitchen-image0', 'kitchen-sr0'],
    );
    assert.equal(fleet.device('kitchen-sr0')?.state.path, '/images/sr0');
    assert.equal(fleet.deviceName({ node: 'nobody@x', drive: 'sr9' }), 'nobody-sr9');
  });

  it('replaces a device state under the same name', () => {
    const fleet = new Fleet(db());
    fleet.applyDrive(drive('w@h', 'sr0'));
    fleet.applyDrive({ ...drive('w@h', 'sr0'), status: 'disc_present' });
    assert.equal(fleet.devices().length, 1);
    assert.equal(fleet.device('w-sr0')?.state.status, 'disc_present');
  });

  it('removes a worker with its drives', () => {
    const d = db();
    const fleet = new Fleet(d);
    fleet.applyStatus(online('a@1'));
    fleet.applyStatus(online('b@2'));
    fleet.applyDrive(drive('a@1', 'sr0'));
    fleet.applyDrive(drive('b@2', 'sr0'));
    fleet.remove('a@1');
    assert.equal(fleet.get('a@1'), undefined);
    assert.deepEqual(
      fleet.devices().map((x) => x.name),
      ['b-sr0'],
    );
    assert.equal(workerRow(d, 'a@1'), undefined);
  });
});

describe('Fleet persistence', () => {
  it('reloads stored workers as offline, keeping name and last status', () => {
    const d = db();
    const first = new Fleet(d);
    first.applyStatus(online('kitchen@abc', { name: 'Kitchen', slots: 4 }));
    first.applyStatus(online('attic@def'));
    assert.equal(first.online().length, 2);

    const before = Date.now();
    const second = new Fleet(d);
    const list = second.list();
    assert.deepEqual(
      list.map((a) => [a.node, a.name, a.online]),
      [
        ['attic@def', 'attic', false],
        ['kitchen@abc', 'kitchen', false],
      ],
    );
    const kitchen = second.get('kitchen@abc');
    assert.equal(kitchen?.status?.slots, 4);
    assert.ok(kitchen?.offlineSince !== null && (kitchen?.offlineSince ?? 0) >= before);
    assert.equal(kitchen?.lastContact, 0);
    assert.equal(workerRow(d, 'kitchen@abc')?.online, 0);
    assert.equal(second.deviceName({ node: 'kitchen@abc', drive: 'sr0' }), 'kitchen-sr0', 'device names survive a restart');

    assert.equal(second.applyStatus(online('kitchen@abc')).wasOnline, false, 'the first status after a restart is a transition');
  });

  it('reloads a worker with a damaged stored status without it', () => {
    const d = db();
    d.prepare("INSERT INTO workers (node, name, online, status) VALUES ('x@1', 'X', 1, '{broken')").run();
    const fleet = new Fleet(d);
    assert.equal(fleet.get('x@1')?.status, null);
    assert.equal(fleet.get('x@1')?.online, false);
  });
});

describe('Fleet.applyStatus: what reaches the row', () => {
  const statusOf = (d: Db, node: string): AgentStatus => JSON.parse(workerRow(d, node)?.status ?? 'null') as AgentStatus;

  it('writes a status whose live parts alone changed at most once a minute, and every other change at once', () => {
    const d = db();
    let now = 1_000_000;
    const fleet = new Fleet(d, () => now);
    fleet.applyStatus(online('den@abc', { tasks: ['c1'] }));
    now += 1000;
    const { entry } = fleet.applyStatus(online('den@abc', { tasks: ['c1', 'c2'], last_seen: 'later' }));
    assert.deepEqual(entry.status?.tasks, ['c1', 'c2'], 'memory takes every status');
    assert.deepEqual(statusOf(d, 'den@abc').tasks, ['c1'], 'the row keeps the first: only tasks and last_seen changed');
    now += 1000;
    fleet.applyStatus(online('den@abc', { tasks: ['c2'], slots: 4 }));
    assert.equal(statusOf(d, 'den@abc').slots, 4, 'a new slot count is written at once');
    assert.deepEqual(statusOf(d, 'den@abc').tasks, ['c2']);
    now += STATUS_STORE_EVERY_MS;
    fleet.applyStatus(online('den@abc', { tasks: [], slots: 4 }));
    assert.deepEqual(statusOf(d, 'den@abc').tasks, [], 'a minute later the live parts are written too');
    fleet.applyStatus({ node: 'den@abc', state: 'offline' });
    assert.equal(workerRow(d, 'den@abc')?.online, 0, 'going offline is written at once');
  });

  it('writes the first status after the worker was marked offline, even when it is the same as before', () => {
    const d = db();
    const fleet = new Fleet(d, () => 5_000_000);
    fleet.applyStatus(online('attic@abc'));
    fleet.markOffline('attic@abc');
    assert.equal(workerRow(d, 'attic@abc')?.online, 0);
    fleet.applyStatus(online('attic@abc'));
    assert.equal(workerRow(d, 'attic@abc')?.online, 1);
  });
});

describe('capability ping limits', () => {
  it('counts a stored ping as stale after 30 s, several background pings (every 5 s) later', () => {
    assert.equal(PING_STALE_MS, 30_000);
    assert.equal(PING_STALE_MS / (DEFAULT_CAPABILITY_PING_SECONDS * 1000), 6);
  });
});
