import type { Mount } from '../../shared/api-types.js';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FakeMount, layers, unmountAllUnder } from '../fixtures/fake-mount.js';
import { startSamba, type Samba } from '../fixtures/samba.js';
import { api, freePort, startCoordinator, stopAll, waitFor, world, type CoordinatorHandle, type World } from './harness.js';

/**
 * Storage mounts against a real Samba on loopback (share listing) and the stand-in mount(8) of
 * test/fixtures/fake-mount: it checks the options with the real mount helpers (mount -f -v) and then
 * mounts a tmpfs in the share's place, so mountinfo, stat -f, the write test and umount -l are real.
 * Root is needed for smbd and tmpfs mounts (this machine and CI run as root).
 */


const isRoot = process.getuid?.() === 0;

describe('storage mounts: shares, mount, probe, repair, guard, path map', { skip: isRoot ? false : 'needs root for smbd and tmpfs mounts' }, () => {
  let w: World;
  let c: CoordinatorHandle;
  let samba: Samba;
  const fake = new FakeMount();
  const setMode = (mode: string): void => fake.mode(mode);
  const mountLog = (): string[] => fake.calls();
  // The guard's minute would repair mounts under the tests' feet; its rules are unit-tested with an injected clock.
  const coordinatorEnv = (): Record<string, string> => fake.env();

  before(async () => {
    samba = await startSamba(await freePort());
    w = world();
    c = await startCoordinator(w, coordinatorEnv());
  });
  after(async () => {
    await stopAll();
    await samba?.stop();
    if (w) unmountAllUnder(w.media);
  });

  it('lists the shares of a real Samba host, and says in words why not', async () => {
    const ok = await api<{ host: string; shares: { name: string; comment: string }[] }>(c.url, 'GET', `/storage-mounts/shares?host=127.0.0.1:${samba.port}`);
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.body.shares, [
      { name: 'media', comment: 'guest share' },
      { name: 'rips', comment: 'user share' },
    ]);
    const closed = await api(c.url, 'GET', `/storage-mounts/shares?host=127.0.0.1:${await freePort()}`);
    assert.equal(closed.status, 502);
    assert.match(closed.text, /file sharing is off or on another port \(NT_STATUS_CONNECTION_REFUSED\)/);
    const missing = await api(c.url, 'GET', '/storage-mounts/shares');
    assert.equal(missing.status, 400);
    assert.match(missing.text, /host is missing/);
    const bad = await api(c.url, 'GET', '/storage-mounts/shares?host=-oProxyCommand%3Dx');
    assert.equal(bad.status, 400);
  });

  it('refuses bad mount requests with reasons', async () => {
    const cases: [unknown, RegExp][] = [
      [{ protocol: 'ftp', host: 'nas', share: 'a', name: 'x' }, /protocol must be "SMB" or "NFS"/],
      [{ protocol: 'SMB', host: 'nas', share: 'a', name: '../etc' }, /name must be/],
      [{ protocol: 'SMB', host: 'nas', share: 'a,port=1', name: 'x' }, /share "a,port=1" must be a share name/],
      [{ protocol: 'NFS', host: 'nas', export: 'relative', name: 'x' }, /must be an absolute path/],
      [{ protocol: 'NFS', host: 'nas', export: '/e', name: 'x', credentials: { username: 'u', password: 'p' } }, /NFS exports take no credentials/],
      [{ protocol: 'SMB', host: 'nas', share: 'a', name: 'x', credentials: { username: 'u', password: 'p\nusername=root' } }, /must not contain line breaks/],
    ];
    for (const [body, reason] of cases) {
      const r = await api(c.url, 'POST', '/storage-mounts', body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.match(r.text, reason);
    }
    fs.mkdirSync(path.join(w.media, 'Filme'));
    fs.writeFileSync(path.join(w.media, 'Filme', 'keep.mkv'), 'x');
    const hides = await api(c.url, 'POST', '/storage-mounts', { protocol: 'SMB', host: '127.0.0.1', share: 'media', name: 'Filme' });
    assert.equal(hides.status, 409);
    assert.match(hides.text, /already holds files/);
    assert.equal(fs.readFileSync(path.join(w.media, 'Filme', 'keep.mkv'), 'utf8'), 'x');
    assert.deepEqual(mountLog(), [], 'nothing was mounted for a refused request');
  });

  it('mounts a guest share: exact argv, a real layer, reachable, writable; a second POST is 409', async () => {
    const r = await api<Mount>(c.url, 'POST', '/storage-mounts', { protocol: 'SMB', host: `127.0.0.1:${samba.port}`, share: 'media', name: 'nas' });
    assert.equal(r.status, 201, r.text);
    const mp = path.join(w.media, 'nas');
    assert.deepEqual(
      { ...r.body, free_bytes: r.body.free_bytes !== null },
      { name: 'nas', protocol: 'SMB', host: '127.0.0.1', port: samba.port, share: 'media', source: '//127.0.0.1/media', mount_point: mp, mounted: true, reachable: true, read_only: false, has_credentials: false, free_bytes: true, total_bytes: 64 * 1024 * 1024, warning: null, last_error: null },
    );
    assert.equal(mountLog().at(-1), `-t cifs //127.0.0.1/media ${mp} -o guest,port=${samba.port},uid=0,gid=0,file_mode=0644,dir_mode=0755,iocharset=utf8,noserverino,soft`);
    assert.match(fake.checkLog(), /mount\.cifs kernel mount options: ip=127\.0\.0\.1,unc=\\\\127\.0\.0\.1\\media/);
    assert.equal(layers(mp).length, 1);
    assert.match(layers(mp)[0], / - tmpfs \/\/127\.0\.0\.1\/media /);
    const again = await api(c.url, 'POST', '/storage-mounts', { protocol: 'SMB', host: '127.0.0.1', share: 'other', name: 'nas' });
    assert.equal(again.status, 409);
    assert.match(again.text, /named nas is active/);
    assert.equal(layers(mp).length, 1);
    const list = await api<Mount[]>(c.url, 'GET', '/storage-mounts');
    assert.deepEqual(list.body.map((m) => [m.name, m.mounted, m.reachable]), [['nas', true, true]]);
    const targets = await api<{ name: string; path: string; mounted: boolean; network: boolean; exists: boolean; total_bytes: number | null; mount?: string }[]>(c.url, 'GET', '/storage-targets');
    const share = targets.body.find((t) => t.name === 'mount:nas');
    assert.deepEqual(share, { name: 'mount:nas', path: mp, total_bytes: 64 * 1024 * 1024, free_bytes: share?.total_bytes, warning: `less than 60 GB free on ${mp}`, exists: true, mounted: true, network: true, mount: 'nas' });
    const media = targets.body.find((t) => t.name === 'media');
    assert.deepEqual([media?.mounted, media?.network], [false, false]);
  });

  it('keeps credentials for the service alone: a 0600 file, never in answers or logs', async () => {
    const r = await api<Mount>(c.url, 'POST', '/storage-mounts', { protocol: 'SMB', host: `127.0.0.1:${samba.port}`, share: 'rips', name: 'rips', credentials: { username: samba.user, password: 'pa,ss=word!' } });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.has_credentials, true);
    const file = path.join(w.root, 'coordinator-data', 'mount-credentials', 'rips');
    assert.equal(fs.readFileSync(file, 'utf8'), `username=${samba.user}\npassword=pa,ss=word!\n`);
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.equal(fs.statSync(path.dirname(file)).mode & 0o777, 0o700);
    assert.match(mountLog().at(-1) ?? '', new RegExp(`-o credentials=${file},port=`));
    assert.doesNotMatch(r.text + (await api(c.url, 'GET', '/storage-mounts')).text, /pa,ss=word/);
    const logs = await api(c.url, 'GET', '/logs?limit=500');
    assert.doesNotMatch(logs.text, /pa,ss=word/);
    assert.doesNotMatch(c.proc.lines.join('\n'), /pa,ss=word/);
  });

  it('gives the NAS\'s refusal in plain words and keeps nothing of a mount that failed, least of all its password (issue 38)', async () => {
    setMode('eacces');
    const guest = await api(c.url, 'POST', '/storage-mounts', { protocol: 'SMB', host: '127.0.0.1', share: 'private', name: 'privat' });
    assert.equal(guest.status, 502);
    assert.match(guest.text, /refused the guest login \(error 13, permission denied\): this share needs a user name and password/);
    assert.match(guest.text, /Nothing was saved \(no password kept\): correct the details and add it again/);
    const user = await api(c.url, 'POST', '/storage-mounts', { protocol: 'SMB', host: '127.0.0.1', share: 'private', name: 'privat', credentials: { username: 'x', password: 'wrong-secret' } });
    assert.equal(user.status, 502);
    assert.match(user.text, /check user name and password/);
    assert.equal(fs.existsSync(path.join(w.root, 'coordinator-data', 'mount-credentials', 'privat')), false, 'the password of the failed mount is not on disk');
    setMode('hostdown');
    const down = await api(c.url, 'POST', '/storage-mounts', { protocol: 'SMB', host: '127.0.0.1', share: 'private', name: 'privat' });
    assert.match(down.text, /error 112/);
    const list = await api<Mount[]>(c.url, 'GET', '/storage-mounts');
    assert.equal(list.body.find((m) => m.name === 'privat'), undefined, 'a mount that never mounted is not saved');
    const map = await api<{ entries: { name: string }[] }>(c.url, 'GET', '/worker-setup/pfad-map');
    assert.deepEqual(map.body.entries.map((e) => e.name), ['nas', 'rips'], 'a mount that failed maps nothing');
    const repair = await api(c.url, 'POST', '/storage-mounts/privat/repair');
    assert.equal(repair.status, 404);
    setMode('ok');
    const added = await api<Mount>(c.url, 'POST', '/storage-mounts', { protocol: 'SMB', host: '127.0.0.1', share: 'private', name: 'privat' });
    assert.equal(added.status, 201, added.text);
    assert.deepEqual([added.body.mounted, added.body.reachable], [true, true]);
  });

  it('warns about a read-only share in the answer and the log', async () => {
    setMode('ro');
    const r = await api<Mount>(c.url, 'POST', '/storage-mounts', { protocol: 'NFS', host: '127.0.0.1', export: '/export/archiv', name: 'archiv' });
    setMode('ok');
    assert.equal(r.status, 201, r.text);
    assert.equal(mountLog().at(-1), `-t nfs 127.0.0.1:/export/archiv ${path.join(w.media, 'archiv')} -o soft,timeo=100,retrans=2`);
    assert.equal(r.body.read_only, true);
    assert.match(r.body.warning ?? '', /archiv is read-only: Ripwerk can read from it but cannot write rips there/);
    await c.proc.waitForLine(/WARN.*storage mount archiv is read-only/i, 5000);
  });

  it('a share that stops answering: unreachable within the 3 s probe, mounted twice, detached, repair later', async () => {
    const mp = path.join(w.media, 'nas');
    fake.statHangs(true);
    const t0 = Date.now();
    const list = await api<Mount[]>(c.url, 'GET', '/storage-mounts');
    const waited = Date.now() - t0;
    const nas = list.body.find((m) => m.name === 'nas');
    assert.deepEqual([nas?.mounted, nas?.reachable], [true, false]);
    assert.match(nas?.warning ?? '', /mounted but not answering \(no answer within 3 s\)/);
    assert.ok(waited < 10_000, `the list waited ${waited} ms`);
    // A dead mount of that name is repaired with the new details: the probe fails twice, so it is
    // mounted twice and then detached, with words pointing to repair.
    const before = mountLog().length;
    const r = await api(c.url, 'POST', '/storage-mounts', { protocol: 'SMB', host: `127.0.0.1:${samba.port}`, share: 'media', name: 'nas' });
    assert.equal(r.status, 502);
    assert.match(r.text, /was mounted but did not answer \(no answer within 3 s\)\. The new details were not kept \(the earlier ones stay, repair retries them\)/);
    assert.equal(mountLog().length - before, 2);
    assert.equal(layers(mp).length, 0, 'detached after the second failed probe');
    fake.statHangs(false);
    // Stale layers stacked on the mount point are detached before a fresh mount: exactly one remains.
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'stale-a', mp]);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'stale-b', mp]);
    const repaired = await api<Mount>(c.url, 'POST', '/storage-mounts/nas/repair');
    assert.equal(repaired.status, 200, repaired.text);
    assert.equal(layers(mp).length, 1);
    assert.match(layers(mp)[0], /\/\/127\.0\.0\.1\/media/);
    const missing = await api(c.url, 'POST', '/storage-mounts/nothere/repair');
    assert.equal(missing.status, 404);
  });

  it('derives the path map for external workers from the attached mounts', async () => {
    const r = await api<{ variable: string; value: string; entries: { name: string; value: string }[]; hint: string }>(c.url, 'GET', '/worker-setup/pfad-map');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.variable, 'RIPWERK_PATH_MAP');
    // SMB shares map to their UNC path; the NFS export maps to "" and is left out of the value.
    assert.equal(r.body.value, `${w.media}/nas=\\\\127.0.0.1\\media;${w.media}/privat=\\\\127.0.0.1\\private;${w.media}/rips=\\\\127.0.0.1\\rips`);
    assert.deepEqual(r.body.entries.map((e) => [e.name, e.value]), [
      ['archiv', ''],
      ['nas', `${w.media}/nas=\\\\127.0.0.1\\media`],
      ['privat', `${w.media}/privat=\\\\127.0.0.1\\private`],
      ['rips', `${w.media}/rips=\\\\127.0.0.1\\rips`],
    ]);
    assert.match(r.body.hint, /Set RIPWERK_PATH_MAP=/);
  });

  it('reports the mount guard in /health/vorraete', async () => {
    const v = await api<{ mount_guard: { active: boolean; mounts: number } }>(c.url, 'GET', '/health/vorraete');
    assert.equal(v.body.mount_guard.active, true);
    assert.equal(v.body.mount_guard.mounts, 4);
  });

  it('remounts saved mounts in the background at start, never delaying it', async () => {
    await c.proc.kill('SIGKILL');
    for (const name of ['nas', 'rips', 'privat', 'archiv']) execFileSync('umount', ['-l', path.join(w.media, name)]);
    // A NAS that hangs the mount call must not hold the start up.
    setMode('hang');
    const logged = mountLog().length;
    c = await startCoordinator(w, coordinatorEnv(), { port: c.port, mqttPort: c.mqttPort });
    const health = await api<{ ok: boolean }>(c.url, 'GET', '/health');
    assert.equal(health.body.ok, true);
    await waitFor('the first remount attempt', async () => mountLog().length > logged);
    await c.proc.kill('SIGKILL');
    execFileSync('pkill', ['-f', 'sleep 600']);
    setMode('ok');
    c = await startCoordinator(w, coordinatorEnv(), { port: c.port, mqttPort: c.mqttPort });
    // The archive share now comes back writable: its write test clears the read-only finding.
    await waitFor('all four mounted again, archiv writable', async () => {
      const l = await api<Mount[]>(c.url, 'GET', '/storage-mounts');
      return l.body.length === 4 && l.body.every((m) => m.mounted && m.reachable && !m.read_only && m.warning === null);
    }, 30_000);
  });

  it('removes a mount: detached, credentials gone, the empty folder kept', async () => {
    const mp = path.join(w.media, 'rips');
    const r = await api(c.url, 'DELETE', '/storage-mounts/rips');
    assert.equal(r.status, 204, r.text);
    assert.equal(layers(mp).length, 0);
    assert.equal(fs.existsSync(path.join(w.root, 'coordinator-data', 'mount-credentials', 'rips')), false);
    assert.equal(fs.existsSync(mp), true);
    assert.equal((await api(c.url, 'DELETE', '/storage-mounts/rips')).status, 404);
  });
});
