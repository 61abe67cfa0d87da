import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MountGuard, type GuardedMounts, type GuardTimer } from '../../../../coordinator/mounts/mount-guard.js';
import { explainMountError, explainSmbStatus } from '../../../../coordinator/mounts/mount-errors.js';
import type { LiveCheck } from '../../../../coordinator/mounts/mount-service.js';
import { credentialsFileText, mountArgs, parseMountRequest, uncPath } from '../../../../coordinator/mounts/mount-spec.js';
import { isReadOnly, layersAt, parseMountinfo } from '../../../../coordinator/mounts/mountinfo.js';
import type { MountRow } from '../../../../coordinator/mounts/mounts-store.js';
import { pathMapAdvice } from '../../../../coordinator/mounts/path-map-advice.js';
import { PROBE_LIMIT_MS } from '../../../../coordinator/mounts/probe.js';
import { parseShareList } from '../../../../coordinator/mounts/smb-shares.js';
import { Logger, type LogEntry } from '../../../../shared/log.js';
import { mapPath, parsePathMap } from '../../../../shared/path-map.js';
import { sampleSection, sampleText } from '../../../fixtures/tools-samples.js';

function row(name: string, protocol: 'smb' | 'nfs', share: string): MountRow {
  return { name, protocol, host: 'nas.local', port: null, share, vers: null, mount_point: `/app/media/${name}`, has_credentials: 0, state: 'active', read_only: 0, last_error: null, created_at: '', updated_at: '' };
}

describe('mountinfo parser (captured stacked tmpfs layers)', () => {
  const text = sampleSection('mount-stack-findmnt.txt', '$ grep  ROOT/ /proc/self/mountinfo', 'exit=0').join('\n');
  const layers = parseMountinfo(text);

  it('reads every line, splitting at the lone "-" and undoing octal escapes', () => {
    assert.equal(layers.length, 3);
    assert.deepEqual(layers[0], { id: 42, parentId: 27, mountPoint: 'ROOT/ripwerk/mounts/nas-movies', options: 'rw,relatime', fsType: 'tmpfs', source: 'ripwerk-test-a', superOptions: 'rw,size=16384k,mode=755' });
    assert.equal(layers[2].mountPoint, 'ROOT/ripwerk/mounts/with space');
  });

  it('finds stacked layers of one mount point, the visible one last', () => {
    const stack = layersAt(layers, 'ROOT/ripwerk/mounts/nas-movies');
    assert.deepEqual(stack.map((l) => [l.id, l.parentId, l.source]), [[42, 27, 'ripwerk-test-a'], [43, 42, 'ripwerk-test-b']]);
    assert.deepEqual(layersAt(layers, 'ROOT/ripwerk/mounts'), []);
  });

  it('handles optional fields before the separator and tells read-only layers', () => {
    const [l] = parseMountinfo('36 35 98:0 /mnt1 /mnt/nas ro,noatime master:1 shared:7 - cifs //nas/movies rw,vers=3.0\n');
    assert.deepEqual([l.mountPoint, l.fsType, l.source, isReadOnly(l)], ['/mnt/nas', 'cifs', '//nas/movies', true]);
  });
});

describe('mount requests and the mount(8) argv', () => {
  it('builds the SMB call with a credentials file, port and version', () => {
    const { spec, credentials } = parseMountRequest({ protocol: 'SMB', host: 'nas.local:4445', share: 'movies\\uhd', name: 'nas', vers: '3.0', credentials: { username: 'ripper', password: 'a,b', domain: 'WORKGROUP' } });
    assert.deepEqual(spec, { name: 'nas', protocol: 'smb', host: 'nas.local', port: 4445, share: 'movies/uhd', vers: '3.0' });
    assert.equal(credentialsFileText(credentials!), 'username=ripper\npassword=a,b\ndomain=WORKGROUP\n');
    assert.deepEqual(mountArgs(spec, '/app/media/nas', { credentialsFile: '/d/mount-credentials/nas', uid: 990, gid: 991 }), [
      '-t', 'cifs', '//nas.local/movies/uhd', '/app/media/nas', '-o',
      'credentials=/d/mount-credentials/nas,vers=3.0,port=4445,uid=990,gid=991,file_mode=0644,dir_mode=0755,iocharset=utf8,noserverino,soft',
    ]);
    assert.equal(uncPath(spec), '\\\\nas.local\\movies\\uhd');
  });

  it('logs in as guest without a user name (mount.cifs would otherwise ask for a password)', () => {
    const { spec, credentials } = parseMountRequest({ protocol: 'smb', host: '192.168.1.5', share: 'public', name: 'public', credentials: { username: '', password: '' } });
    assert.equal(credentials, null);
    assert.equal(mountArgs(spec, '/m', { credentialsFile: null, uid: 0, gid: 0 })[5].split(',')[0], 'guest');
  });

  it('builds the NFS call: soft, 10 s timeout, two retries', () => {
    const { spec } = parseMountRequest({ protocol: 'NFS', host: 'nas', export: '/export//movies/', name: 'filme-nfs' });
    assert.deepEqual(mountArgs(spec, '/app/media/filme-nfs', { credentialsFile: null, uid: 0, gid: 0 }), ['-t', 'nfs', 'nas:/export/movies', '/app/media/filme-nfs', '-o', 'soft,timeo=100,retrans=2']);
  });

  it('refuses what could escape the folder or smuggle options', () => {
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ protocol: 'SMB', host: 'nas', share: 'm', name: '..' }, /name must be/],
      [{ protocol: 'SMB', host: 'nas', share: 'm', name: 'a/b' }, /name must be/],
      [{ protocol: 'SMB', host: 'nas', share: '../x', name: 'a' }, /must be a share name/],
      [{ protocol: 'SMB', host: 'nas,uid=0', share: 'm', name: 'a' }, /is not a host name/],
      [{ protocol: 'SMB', host: 'nas:99999', share: 'm', name: 'a' }, /out of range/],
      [{ protocol: 'SMB', host: 'nas', share: 'm', name: 'a', vers: '9' }, /vers must be one of/],
      [{ protocol: 'NFS', host: 'nas', export: '/e/../etc', name: 'a' }, /cannot carry/],
      [{ protocol: 'SMB', host: 'nas', name: 'a' }, /share is missing/],
      [{ protocol: 'SMB', share: 'm', name: 'a' }, /host is missing/],
    ];
    for (const [body, reason] of bad) assert.throws(() => parseMountRequest(body), reason, JSON.stringify(body));
  });
});

describe('plain words for mount and SMB errors', () => {
  it('explains mount.cifs errors, error 13 with the guest hint', () => {
    const e13 = 'mount error(13): Permission denied\nRefer to the mount.cifs(8) manual page (e.g. man mount.cifs) and kernel log messages (dmesg)';
    assert.match(explainMountError(e13, { protocol: 'smb', guest: true }), /refused the guest login .* needs a user name and password/);
    assert.match(explainMountError(e13, { protocol: 'smb', guest: false }), /check user name and password/);
    const noKernel = sampleSection('mount-errors-no-kernel-support.txt', '$ mount -t cifs', 'exit=32').join('\n');
    assert.match(explainMountError(noKernel, { protocol: 'smb', guest: true }), /kernel has no cifs support/);
    const nfs = sampleSection('mount-errors-no-kernel-support.txt', '$ mount -t nfs', 'exit=32').join('\n');
    assert.match(explainMountError(nfs, { protocol: 'nfs', guest: true }), /kernel has no nfs support/);
    assert.match(explainMountError('mount.nfs: access denied by server while mounting nas:/export', { protocol: 'nfs', guest: true }), /refused this machine access/);
    assert.match(explainMountError('mount: /m: must be superuser to use mount.', { protocol: 'smb', guest: true }), /needs the right to mount/);
  });

  it('explains the captured NT_STATUS codes, a timeout with its own text', () => {
    const text = sampleText('smb-errors.txt');
    const block = (cmd: string): string => sampleSection('smb-errors.txt', cmd, 'exit=').join('\n');
    assert.match(explainSmbStatus(block('$ smbclient //127.0.0.1/rips -p 4445 -N -c ls'), { guest: true }), /refused the guest login \(NT_STATUS_ACCESS_DENIED\)/);
    assert.match(explainSmbStatus(block('$ smbclient -L //127.0.0.1 -p 4445 -U root%wrong -g'), { guest: false }), /user name or password is wrong/);
    assert.match(explainSmbStatus(block('$ smbclient //127.0.0.1/nosuchshare'), { guest: true }), /no share of that name/);
    assert.match(explainSmbStatus(block('(56597: a free port'), { guest: true }), /file sharing is off or on another port/);
    assert.match(explainSmbStatus(block('BLACKHOLEPORT'), { guest: true }), /not responding \(NT_STATUS_IO_TIMEOUT\)/);
    assert.ok(text.length > 0);
    const noGuest = sampleSection('smb-noguest.txt', '$ smbclient -L //127.0.0.1 -p 4445 -N -g', 'exit=').join('\n');
    assert.match(explainSmbStatus(noGuest, { guest: true }), /lists its shares only to a user with a password/);
  });

  it('lists only disk shares from smbclient -g output, without administrative ones', () => {
    const out = sampleSection('smb-list-machine-readable.txt', '$ smbclient -L //127.0.0.1 -p 4445 -N -g', 'exit=0').join('\n');
    assert.deepEqual(parseShareList(`${out}\nDisk|C$|Default share\n`), [
      { name: 'media', comment: 'guest share' },
      { name: 'rips', comment: 'user share' },
    ]);
  });
});

describe('path map for external workers', () => {
  it('says in plain words that nothing is mounted, with the remedy', () => {
    const advice = pathMapAdvice([]);
    assert.equal(advice.value, '');
    assert.match(advice.hint, /has not mounted any network share.*Remedy: add the NAS share/s);
  });

  it('maps SMB mount points to UNC paths and NFS to "", and the value parses as RIPWERK_PATH_MAP', () => {
    const advice = pathMapAdvice([row('filme', 'smb', 'movies'), row('nfs', 'nfs', '/export/tv')]);
    assert.equal(advice.value, '/app/media/filme=\\\\nas.local\\movies');
    assert.deepEqual(advice.entries.map((e) => [e.source, e.value]), [['//nas.local/movies', '/app/media/filme=\\\\nas.local\\movies'], ['nas.local:/export/tv', '']]);
    const map = parsePathMap(advice.value);
    assert.equal(mapPath(map, '/app/media/filme/Heat (1995)/Heat (1995).mkv'), '\\\\nas.local\\movies\\Heat (1995)\\Heat (1995).mkv');
    assert.match(pathMapAdvice([row('nfs', 'nfs', '/export/tv')]).hint, /Only NFS exports/);
  });
});

describe('mount guard (injected clock and schedule)', () => {
  function setup(rows: MountRow[]) {
    let now = 1_000_000;
    const state = new Map<string, boolean>(rows.map((r) => [r.name, true]));
    const repairs: string[] = [];
    let repairWorks = true;
    let unfinished = 0;
    const mounts: GuardedMounts = {
      store: { all: () => rows } as GuardedMounts['store'],
      check: async (r: MountRow): Promise<LiveCheck> => ({ mounted: true, readOnly: false, probe: state.get(r.name) ? { ok: true, fsType: 'cifs', totalBytes: 1, freeBytes: 1, ms: 1 } : { ok: false, reason: 'timeout', detail: 'no answer within 3 s', ms: 3000 } }),
      repair: async (name: string) => {
        repairs.push(name);
        if (!repairWorks) throw new Error('still dead');
        state.set(name, true);
        return {} as Awaited<ReturnType<GuardedMounts['repair']>>;
      },
    };
    const lines: LogEntry[] = [];
    const log = new Logger('test', true);
    log.addSink((e) => lines.push(e));
    let scheduled: (() => void) | null = null;
    const timer: GuardTimer = { stop: () => { scheduled = null; } };
    const guard = new MountGuard(mounts, () => unfinished, log, (fn) => { scheduled = fn; return timer; }, () => now);
    return {
      guard, state, repairs, lines,
      advance: (ms: number) => { now += ms; },
      setUnfinished: (n: number) => { unfinished = n; },
      setRepairWorks: (ok: boolean) => { repairWorks = ok; },
      get scheduled() { return scheduled; },
    };
  }

  it('repairs a dead mount only when no job is unfinished, and logs only transitions', async () => {
    const t = setup([row('nas', 'smb', 'movies'), row('nfs', 'nfs', '/e')]);
    t.guard.start();
    assert.ok(t.scheduled, 'the guard registered its schedule');
    await t.guard.tick();
    assert.deepEqual([t.repairs, t.lines.length], [[], 0], 'a healthy start logs nothing');
    t.state.set('nas', false);
    t.setUnfinished(2);
    await t.guard.tick();
    await t.guard.tick();
    assert.deepEqual(t.repairs, [], 'held back while jobs are unfinished');
    assert.deepEqual(t.lines.map((l) => l.message), ['mount guard: storage mount nas unreachable (no answer within 3 s)'], 'one line for the transition, not one per round');
    const held = t.guard.state();
    assert.deepEqual([held.mit_treffer, held.unreachable, held.held_back], [true, ['nas'], '2 jobs are unfinished; the guard repairs only when none is']);
    t.setUnfinished(0);
    t.setRepairWorks(false);
    await t.guard.tick();
    await t.guard.tick();
    assert.deepEqual(t.repairs, ['nas', 'nas']);
    assert.equal(t.lines.length, 1, 'failed repairs of a mount already known dead add no lines');
    t.setRepairWorks(true);
    await t.guard.tick();
    assert.deepEqual(t.lines.map((l) => l.message).slice(1), ['mount guard: storage mount nas repaired by the mount guard']);
    const after = t.guard.state();
    assert.deepEqual([after.mit_treffer, after.repaired, after.alter_sekunden], [false, ['nas'], 0]);
    t.advance(90_000);
    assert.equal(t.guard.state().alter_sekunden, 90);
    await t.guard.stop();
    assert.equal(t.scheduled, null);
    assert.equal(t.guard.state().active, false);
  });

  it('a mount that comes back by itself is logged once as reachable again', async () => {
    const t = setup([row('nas', 'smb', 'movies')]);
    t.state.set('nas', false);
    t.setUnfinished(1);
    await t.guard.tick();
    t.state.set('nas', true);
    await t.guard.tick();
    await t.guard.tick();
    assert.deepEqual(t.lines.map((l) => l.message), ['mount guard: storage mount nas unreachable (no answer within 3 s)', 'mount guard: storage mount nas reachable again']);
  });
});

describe('mount reachability probe limit', () => {
  it('gives a share 3 s to answer the reachability probe', () => {
    assert.equal(PROBE_LIMIT_MS, 3_000);
  });
});
