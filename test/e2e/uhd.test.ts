import type { Device } from '../../shared/api-types.js';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  api, insertSparseBluray, restartAgent, smallMkv, startAgent, startCoordinator, stopAll, waitFor, waitForStatus, world,
  type AgentHandle, type CoordinatorHandle, type Job, type World,
} from './harness.js';


describe('4K UHD discs: failure reasons and the free-space check', () => {
  let w: World;
  let c: CoordinatorHandle;
  let kino: AgentHandle;
  const device = 'kino-drive-kino';

  async function ripFails(mode: string, size: number): Promise<Job> {
    await kino.proc.kill('SIGTERM');
    kino = await restartAgent({ ...kino, env: { ...kino.env, FAKE_MAKEMKV_MODE: mode } });
    for (const f of fs.readdirSync(kino.driveDir)) fs.rmSync(path.join(kino.driveDir, f), { recursive: true, force: true });
    insertSparseBluray(kino.driveDir, 'UHD_FILM', size);
    await waitFor('the UHD disc', async () => (await api<Device[]>(c.url, 'GET', '/devices')).body.find((d) => d.name === device && d.disc?.type === 'uhd'), 30_000);
    const created = await api<Job>(c.url, 'POST', '/jobs', { device });
    assert.equal(created.status, 201, created.text);
    return waitForStatus(c.url, created.body.id, ['failed']);
  }

  before(async () => {
    w = world();
    c = await startCoordinator(w);
    kino = await startAgent(w, c.mqttUrl, 'kino', { makemkv: true, extra: { FAKE_MAKEMKV_SOURCE_MKV: smallMkv(), FAKE_MAKEMKV_TITLES: '30' } });
  });
  after(stopAll);

  it('says to install a key store, naming the key count, when the volume key is unknown', async () => {
    const { error } = await ripFails('volume-key-unknown', 60 * 1024 ** 3);
    assert.equal(error, 'the volume key of this 4K UHD disc is unknown: install a key store (POST /api/system/keystore); this worker knows 0 disc keys');
  });

  it('says a drive firmware mode with raw access is needed on code 11', async () => {
    const job = await ripFails('fail-open', 60 * 1024 ** 3);
    assert.match(job.error ?? '', /could not open this 4K UHD disc \(code 11\): reading 4K UHD discs needs a drive firmware mode with raw disc access/);
    // The rip wrote no video file: its empty raw folder is removed and nothing offers a retry.
    assert.equal(fs.existsSync(path.join(w.raw, job.id)), false);
    assert.equal(job.can_retry, false);
    const roh = await api<{ state: string; can_retry: boolean }>(c.url, 'GET', `/jobs/${job.id}/rohdaten`);
    assert.deepEqual([roh.body.state, roh.body.can_retry], ['absent', false]);
  });

  it('refuses a disc larger than the free space of the raw folder, with both sizes', async () => {
    const st = fs.statfsSync(w.raw);
    const free = st.bavail * st.bsize;
    const { error } = await ripFails('', free + 20 * 1024 ** 3);
    assert.match(error ?? '', new RegExp(`^not enough free space in ${w.raw}/[0-9a-f-]+: the rip needs about \\d+\\.\\d GB, \\d+\\.\\d GB are free$`));
    assert.deepEqual(fs.readdirSync(w.media), [], 'nothing was written to the library');
  });
});
