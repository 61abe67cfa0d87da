import type { Device } from '../../shared/api-types.js';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FIXTURES_DIR } from '../fixtures/tools-samples.js';
import { api, startAgent, startCoordinator, stopAll, tempDir, waitFor, waitForStatus, world, type CoordinatorHandle, type Job } from './harness.js';


/**
 * A physical drive /dev/sr0 as the agent sees it through the system tools, replayed from recorded
 * outputs by the stand-ins in test/fixtures/fake-tools (this machine has no optical drive).
 */
describe('physical drive: listing, disc, eject rules (recorded tool outputs)', () => {
  let c: CoordinatorHandle;
  const state = tempDir('ripwerk-drive-state-');
  const device = 'zimmer-sr0';
  const set = (file: string, value: string): void => fs.writeFileSync(path.join(state, file), `${value}\n`);

  async function sr0(): Promise<Device | undefined> {
    return (await api<Device[]>(c.url, 'GET', '/devices')).body.find((d) => d.name === device);
  }

  before(async () => {
    set('devices', '/dev/sr0');
    set('status', '4');
    set('udev', 'drive-udevadm-info-dvd.txt');
    set('size', '7834892288');
    const w = world();
    c = await startCoordinator(w);
    await startAgent(w, c.mqttUrl, 'zimmer', {
      makemkv: true,
      extra: {
        DRIVES: '/dev/sr0',
        PATH: `${path.join(FIXTURES_DIR, 'fake-tools')}:${process.env.PATH ?? ''}`,
        FAKE_DRIVE_STATE: state,
        FAKE_MAKEMKV_MODE: 'hang',
      },
    });
  });
  after(stopAll);

  it('lists the drive with vendor and model and its disc from the udev database', async () => {
    const d = await waitFor('sr0 with a disc', async () => {
      const x = await sr0();
      return x?.disc ? x : undefined;
    }, 30_000);
    assert.equal(d.kind, 'device');
    assert.equal(d.path, '/dev/sr0');
    assert.equal(d.vendor, 'HL-DT-ST');
    assert.equal(d.model, 'BD-RE WH16NS60');
    assert.equal(d.status, 'disc_present');
    assert.equal(d.disc?.type, 'dvd');
    assert.equal(d.disc?.label, 'MY_MOVIE_2003');
    assert.equal(d.disc?.title, 'My Movie');
    assert.equal(d.disc?.year, 2003);
    assert.equal(d.disc?.size_bytes, 7834892288);
  });

  it('refuses to eject while a job on the drive is pending or running', async () => {
    const created = await api<Job>(c.url, 'POST', '/jobs', { device });
    assert.equal(created.status, 201, created.text);
    const busy = await api(c.url, 'POST', `/devices/${device}/eject`);
    assert.equal(busy.status, 409);
    assert.equal(busy.text, `${device} is busy with job ${created.body.id}; cancel it before ejecting\n`);
    assert.equal((await api(c.url, 'POST', `/jobs/${created.body.id}/cancel`)).status, 200);
    await waitForStatus(c.url, created.body.id, ['canceled']);
  });

  it('answers with a plain reason when the disc stays inside after 5 s', async () => {
    const started = Date.now();
    const r = await api(c.url, 'POST', `/devices/${device}/eject`);
    assert.equal(r.status, 502);
    assert.match(r.text, /^eject of zimmer-sr0 failed: the disc is still in drive sr0 after eject/);
    assert.ok(Date.now() - started >= 5000, 'the status was polled for the whole 5 s');
    const calls = fs.readFileSync(path.join(state, 'calls'), 'utf8');
    assert.ok(calls.indexOf('eject -i off /dev/sr0') < calls.indexOf('eject /dev/sr0'), 'the door is unlocked before the eject');
    assert.equal((await sr0())?.status, 'disc_present');
  });

  it('ejects when the tray opens, and the drive shows no disc', async () => {
    set('status-after-eject', '2');
    set('udev-after-eject', 'drive-udevadm-info-empty.txt');
    set('eject-delay-polls', '3');
    const r = await api<{ ejected: boolean }>(c.url, 'POST', `/devices/${device}/eject`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.ejected, true);
    const d = await waitFor('sr0 open', async () => {
      const x = await sr0();
      return x?.status === 'tray_open' ? x : undefined;
    });
    assert.equal(d.disc, null);
  });
});
