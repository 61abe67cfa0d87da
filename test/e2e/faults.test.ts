import type { Device, JobDetail, Worker } from '../../shared/api-types.js';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { chromium } from 'playwright-core';
import { FIXTURES_DIR } from '../fixtures/tools-samples.js';
import {
  api, dvdImage, freePort, insertDisc, job, Proc, processesMentioning, restartAgent, sleep, slowHandbrake, smallMkv, startAgent, startCoordinator, stopAll, waitFor, waitForDisc,
  waitForStatus, world, type Job,
} from './harness.js';

interface LogLine { level: string; message: string }

async function jobLogs(base: string, id: string): Promise<LogLine[]> {
  const r = await api<{ logs: LogLine[] }>(base, 'GET', `/jobs/${id}/detail`);
  return r.body.logs;
}

function mosquittoBin(): string {
  return fs.existsSync('/usr/sbin/mosquitto') ? '/usr/sbin/mosquitto' : 'mosquitto';
}

async function startMosquitto(port: number): Promise<Proc> {
  const proc = new Proc('mosquitto', spawn(mosquittoBin(), ['-p', String(port), '-v'], { stdio: ['ignore', 'pipe', 'pipe'] }));
  await proc.waitForLine(/Opening ipv4 listen socket on port|mosquitto version .* running/);
  return proc;
}

describe('faults never leave a job stuck or lose its data', () => {
  after(stopAll);

  it('proven before deleted: a cut-off and a broken output fail the job with the reason and keep the raw data; a remux saves a raw file the encoder chokes on', async () => {
    const w = world();
    const c = await startCoordinator(w);
    await api(c.url, 'PUT', '/settings', { transcodePreset: 'Very Fast 480p30' });
    // The real HandBrakeCLI, its output spoilt afterwards as the mode file says (exit 0 all the same).
    const mode = path.join(w.root, 'hb-fault');
    const a = await startAgent(w, c.mqttUrl, 'pruef', { extra: { HANDBRAKE_CLI: path.join(FIXTURES_DIR, 'handbrake-faulty.sh'), HB_FAULT_FILE: mode } });
    const films = path.join(w.media, 'Filme');
    const run = async (label: string, fault: string): Promise<Job> => {
      fs.writeFileSync(mode, `${fault}\n`);
      insertDisc(a.driveDir, dvdImage(label, [8]));
      const device = await waitForDisc(c.url, a);
      const created = await api<Job>(c.url, 'POST', '/jobs', { device });
      assert.equal(created.status, 201, created.text);
      return waitForStatus(c.url, created.body.id, ['failed', 'completed'], 120_000);
    };
    const outputs = (folder: string): string[] => (fs.existsSync(path.join(films, folder)) ? fs.readdirSync(path.join(films, folder)) : []);

    const half = await run('HALBIERT', 'half');
    assert.equal(half.status, 'failed');
    assert.match(half.error ?? '', /^title_t01\.mkv: the output is 4 seconds shorter than the title \(0:04 of 0:08\)(; .+)?; the raw data is kept$/);
    assert.equal(half.can_retry, true);
    assert.ok(fs.existsSync(path.join(w.raw, half.id, 'title_t01.mkv')), 'the raw file is kept');
    assert.deepEqual(outputs('Halbiert'), [], 'no output is left');

    const broken = await run('KAPUTT', 'broken');
    assert.equal(broken.status, 'failed');
    assert.match(broken.error ?? '', /^title_t01\.mkv: (the output is \d+ seconds? shorter than the title \(\S+ of 0:08\); )?the output cannot be (read|decoded) cleanly .+; the raw data is kept$/);
    assert.equal(broken.can_retry, true);
    assert.ok(fs.existsSync(path.join(w.raw, broken.id, 'title_t01.mkv')), 'the raw file is kept');
    assert.deepEqual(outputs('Kaputt'), []);
    const logs = await jobLogs(c.url, broken.id);
    assert.ok(logs.some((l) => /^Kaputt\.mkv: attempt 1 failed the proof: .*the output cannot be (read|decoded) cleanly/.test(l.message)), JSON.stringify(logs));
    assert.ok(logs.some((l) => /^Kaputt\.mkv: attempt 2 \(raw remuxed\) failed the proof/.test(l.message)), 'the remux was tried, and did not help a broken encoder');

    // Encoder stand-in, not a real timestamp fault: HandBrakeCLI 1.6.1 encoded every raw file with bad
    // timestamps that could be made here; this one cuts its output unless it reads the agent's remux.
    const saved = await run('ZEITSTEMPEL', 'timestamps');
    assert.equal(saved.status, 'completed', saved.error ?? '');
    assert.deepEqual(outputs('Zeitstempel'), ['Zeitstempel.mkv']);
    assert.ok((await jobLogs(c.url, saved.id)).some((l) => l.message === 'Zeitstempel.mkv: attempt 2 (raw remuxed) made the output, and it passed the proof'));
    assert.equal(fs.existsSync(path.join(w.raw, saved.id)), false, 'proven: the raw data is gone');

    // The kept raw data is good for a retry once the encoder is sound again.
    fs.writeFileSync(mode, 'none\n');
    assert.equal((await api(c.url, 'POST', `/jobs/${half.id}/retry-transcode`)).status, 202);
    const retried = await waitForStatus(c.url, half.id, ['completed'], 120_000);
    assert.equal(retried.can_retry, false);
    assert.deepEqual(outputs('Halbiert'), ['Halbiert.mkv']);
  });

  it('a rip with read errors logs them and counts them in the job; the jobs page offers the careful retry (phone, de and en), which reads with more MakeMKV retries for that run only', async () => {
    const w = world();
    const c = await startCoordinator(w);
    assert.equal((await api(c.url, 'PUT', '/settings', { transcodeEnabled: false })).status, 200);
    // The stand-in reads cleanly only with io_ErrorRetryCount of at least 20 in settings.conf, read when it starts.
    const dataDir = path.join(w.root, 'home-kratzer', '.MakeMKV');
    fs.mkdirSync(dataDir, { recursive: true });
    const conf = '# MakeMKV settings\napp_UpdateEnable = "0"\nio_IgnoreReadErrors = "1"\nio_ErrorRetryCount = "2"\n';
    fs.writeFileSync(path.join(dataDir, 'settings.conf'), conf, { mode: 0o600 });
    const a = await startAgent(w, c.mqttUrl, 'kratzer', { makemkv: true, extra: { FAKE_MAKEMKV_SOURCE_MKV: smallMkv(), FAKE_MAKEMKV_TITLES: '30', FAKE_MAKEMKV_MODE: 'read-errors', FAKE_MAKEMKV_SECONDS: '0' } });
    insertDisc(a.driveDir, dvdImage('KRATZER', [30]));
    const device = await waitForDisc(c.url, a);
    const created = await api<Job>(c.url, 'POST', '/jobs', { device });
    assert.equal(created.status, 201, created.text);
    const failed = await waitForStatus(c.url, created.body.id, ['failed', 'completed'], 120_000);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.meta?.read_errors, 6, JSON.stringify(failed.meta));
    const logs = await jobLogs(c.url, failed.id);
    assert.ok(logs.some((l) => l.level === 'warn' && l.message === 'read error in /VIDEO_TS/VTS_01_1.VOB at 1128.8 MiB (sector 577920 of the file): Scsi error - MEDIUM ERROR:1090'), JSON.stringify(logs));
    assert.ok(logs.some((l) => /^the ripper reported 6 read error\(s\) \(3 not listed\)/.test(l.message)));
    assert.equal(fs.readFileSync(path.join(dataDir, 'settings.conf'), 'utf8'), conf, 'a normal rip leaves settings.conf alone');

    const bad = await api(c.url, 'POST', `/jobs/${failed.id}/retry-rip`, { careful: 'yes' });
    assert.equal(bad.status, 400);
    assert.match(bad.text, /careful must be true or false/);
    // The household's way: the failed job on the jobs page says how many read errors there were and offers the careful re-read (phone, German and English).
    assert.equal((await api(c.url, 'POST', '/setup/complete')).status, 200);
    const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
    let carefulId: string;
    try {
      for (const [locale, hint, button, kind] of [
        ['en-US', 'The rip had 6 read error(s).', 'Read again carefully', 'Disc could not be read'],
        ['de-DE', 'Beim Rippen gab es 6 Lesefehler.', 'Sorgfältig neu lesen', 'Disc nicht lesbar'],
      ] as const) {
        const context = await browser.newContext({ viewport: { width: 390, height: 844 }, locale });
        const page = await context.newPage();
        await page.goto(`http://127.0.0.1:${c.port}/#/auftraege`);
        const row = page.getByTestId(`job-${failed.id}`);
        await row.getByTestId('job-read-errors').filter({ hasText: hint }).waitFor({ timeout: 15_000 });
        // The reason's kind in the page's language before the ripper's English words (issue 38).
        assert.equal(await row.getByTestId('job-error').innerText(), `${kind}: ${failed.error}`);
        assert.equal(await row.getByTestId('job-error').locator('span[lang="en"]').innerText(), failed.error);
        const offer = row.getByRole('button', { name: button, exact: true });
        assert.equal(await offer.count(), 1);
        const box = await offer.boundingBox();
        assert.ok(box && box.height >= 44, `touch target ${box?.height} px`);
        if (locale === 'de-DE') {
          await offer.click();
          carefulId = await waitFor('the careful job', async () => (await api<Job[]>(c.url, 'GET', '/jobs')).body.find((j) => j.id !== failed.id)?.id, 15_000);
        }
        await context.close();
      }
    } finally {
      await browser.close();
    }
    const careful = await api<Job>(c.url, 'GET', `/jobs/${carefulId!}`);
    assert.equal(careful.body.meta?.careful, true, 'the button asked for a careful re-read');
    const done = await waitForStatus(c.url, careful.body.id, ['failed', 'completed'], 120_000);
    const carefulLogs = await jobLogs(c.url, done.id);
    assert.equal(done.status, 'completed', JSON.stringify(carefulLogs));
    assert.ok(carefulLogs.some((l) => l.message === 'careful read: MakeMKV read retries 20'), JSON.stringify(carefulLogs));
    assert.ok(!carefulLogs.some((l) => /read error/.test(l.message)), 'the retries read the disc cleanly');
    assert.equal(done.meta?.read_errors, undefined);
    // The old value is back after the run (io_IgnoreReadErrors untouched), the file private, no leftovers.
    assert.equal(fs.readFileSync(path.join(dataDir, 'settings.conf'), 'utf8'), conf);
    assert.equal(fs.statSync(path.join(dataDir, 'settings.conf')).mode & 0o777, 0o600);
    assert.deepEqual(fs.readdirSync(dataDir).filter((n) => n.startsWith('settings.conf')), ['settings.conf']);
  });

  it('a rip whose agent is SIGKILLed fails within a minute; no ripper is left once the agent is back', async () => {
    const w = world();
    const c = await startCoordinator(w, { AGENT_GRACE_SECONDS: '5' });
    const a = await startAgent(w, c.mqttUrl, 'dachboden', { makemkv: true, extra: { FAKE_MAKEMKV_SOURCE_MKV: smallMkv(), FAKE_MAKEMKV_SECONDS: '300' } });
    insertDisc(a.driveDir, dvdImage('LONG_RIP', [6]));
    const device = await waitForDisc(c.url, a);
    const created = await api<Job>(c.url, 'POST', '/jobs', { device });
    assert.equal(created.status, 201, created.text);
    await waitForStatus(c.url, created.body.id, ['processing']);
    await waitFor('the ripper to run', async () => processesMentioning(path.join(a.driveDir, 'LONG_RIP.iso')).length > 0);

    const killedAt = Date.now();
    await a.proc.kill('SIGKILL');
    const failed = await waitForStatus(c.url, created.body.id, ['failed'], 60_000);
    const seconds = (Date.now() - killedAt) / 1000;
    assert.ok(seconds < 60, `failed after ${seconds} s`);
    assert.match(failed.error ?? '', /went offline during the rip .*retry the rip/);

    await restartAgent(a);
    await waitFor('the orphaned ripper to be killed', async () => processesMentioning(path.join(a.driveDir, 'LONG_RIP.iso')).length === 0, 15_000);
    await sleep(1500);
    const after = await job(c.url, created.body.id);
    assert.equal(after.status, 'failed', 'the job stays failed after the agent returns');
    assert.equal(after.error, failed.error, 'the stored reason is kept');
    assert.equal(fs.existsSync(path.join(w.raw, created.body.id)), false, 'the partial raw dir was removed');
  });

  it('the transcode goes to another worker when the chosen one is offline, and moves when its worker dies mid-transcode', async () => {
    const w = world();
    const c = await startCoordinator(w, { AGENT_GRACE_SECONDS: '4' });
    await api(c.url, 'PUT', '/settings', { transcodePreset: 'Very Fast 480p30' });
    const ripper = await startAgent(w, c.mqttUrl, 'flur');
    const gone = await startAgent(w, c.mqttUrl, 'weg', { drive: false });
    await waitFor('weg online', async () => (await api<Worker[]>(c.url, 'GET', '/capabilities')).body.find((x) => x.name === 'weg' && x.online));
    await gone.proc.kill('SIGKILL');
    await waitFor('weg offline', async () => (await api<Worker[]>(c.url, 'GET', '/capabilities')).body.find((x) => x.name === 'weg' && !x.online));

    insertDisc(ripper.driveDir, dvdImage('FALLBACK', [8]));
    let device = await waitForDisc(c.url, ripper);
    const first = await api<Job>(c.url, 'POST', '/jobs', { device, transcode_node: 'weg' });
    assert.equal(first.status, 201, first.text);
    const done = await waitForStatus(c.url, first.body.id, ['completed']);
    assert.equal(done.transcode_node, ripper.node);
    assert.ok((await jobLogs(c.url, done.id)).some((l) => /worker weg@\S+ is offline; the transcode goes to flur@/.test(l.message)));

    // A slow encoder on "langsam" keeps the transcode running while its worker is killed.
    const slow = await startAgent(w, c.mqttUrl, 'langsam', { drive: false, extra: { HANDBRAKE_CLI: slowHandbrake(8) } });
    await waitFor('langsam online', async () => (await api<Worker[]>(c.url, 'GET', '/capabilities')).body.find((x) => x.name === 'langsam' && x.online));
    insertDisc(ripper.driveDir, dvdImage('MOVED', [8]));
    device = await waitForDisc(c.url, ripper);
    const second = await api<Job>(c.url, 'POST', '/jobs', { device, transcode_node: 'langsam' });
    assert.equal(second.status, 201, second.text);
    await waitFor('transcode on langsam', async () => {
      const logs = await jobLogs(c.url, second.body.id);
      return logs.some((l) => /transcode started on langsam@/.test(l.message));
    });
    await slow.proc.kill('SIGKILL');
    const moved = await waitForStatus(c.url, second.body.id, ['completed'], 90_000);
    assert.equal(moved.transcode_node, ripper.node);
    assert.ok((await jobLogs(c.url, moved.id)).some((l) => /went offline during the transcode; the transcode goes back to the shared queue/.test(l.message)));

    // The killed worker returns: it is told to drop the transcode that was taken away from it.
    const back = await restartAgent(slow);
    await back.proc.waitForLine(/transcode_files canceled before it started/, 30_000);
    await sleep(1000);
    const dirs = fs.readdirSync(path.join(w.media, 'Filme')).filter((d) => d.startsWith('Moved'));
    assert.deepEqual(dirs, ['Moved'], 'one output folder, no duplicate from the returning worker');
    assert.equal((await job(c.url, second.body.id)).status, 'completed');
  });

  /**
   * A worker "stirbt" whose scan of its finished output (ffprobe on a file under MEDIA_ROOT) kills it,
   * the node process above its probe shell: its encodes ended and are in its ledger, its raw folder is
   * still there, its job_done not stored yet. Its HandBrakeCLI writes MP4 (under the .mkv name), so
   * that the scan is ffprobe's: a Matroska file's streams are read in-process. The job is a DVD ripped
   * by "flur" and sent to stirbt.
   */
  async function workerDyingAfterItsEncode(name: string, coordinatorEnv: Record<string, string>) {
    const w = world();
    const c = await startCoordinator(w, coordinatorEnv);
    await api(c.url, 'PUT', '/settings', { transcodePreset: 'Very Fast 480p30' });
    const ripper = await startAgent(w, c.mqttUrl, 'flur');
    const bin = fs.mkdtempSync(path.join(w.root, 'bin-'));
    const killAgent = 'p=$PPID; while [ "$(cat /proc/$p/comm)" != node ]; do p=$(cut -d" " -f4 /proc/$p/stat); done; kill -9 $p';
    fs.writeFileSync(path.join(bin, 'ffprobe'), `#!/bin/sh\ncase "$*" in *"${w.media}"*) ${killAgent}; exit 1;; esac\nexec /usr/bin/ffprobe "$@"\n`, { mode: 0o755 });
    const mp4 = path.join(bin, 'HandBrakeCLI-mp4');
    fs.writeFileSync(mp4, '#!/bin/sh\nexec HandBrakeCLI "$@" --format av_mp4\n', { mode: 0o755 });
    const dying = await startAgent(w, c.mqttUrl, 'stirbt', { drive: false, extra: { PATH: `${bin}:${process.env.PATH ?? ''}`, HANDBRAKE_CLI: mp4 } });
    await waitFor('stirbt online', async () => (await api<Worker[]>(c.url, 'GET', '/capabilities')).body.find((x) => x.name === 'stirbt' && x.online));
    insertDisc(ripper.driveDir, dvdImage(name.toUpperCase(), [8]));
    const device = await waitForDisc(c.url, ripper);
    const created = await api<Job>(c.url, 'POST', '/jobs', { device, transcode_node: 'stirbt' });
    assert.equal(created.status, 201, created.text);
    const films = path.join(w.media, 'Filme');
    const own = path.join(films, name, `${name}.mkv`);
    await waitFor('the dying worker\'s encode', async () => !dying.proc.alive && fs.existsSync(own), 90_000);
    /** The dying worker started again, with the real ffprobe. */
    const restart = () => restartAgent({ ...dying, env: { ...dying.env, PATH: process.env.PATH ?? '' } });
    return { w, c, ripper, created, films, own, restart };
  }

  it('a worker back after its encode ended, within ENCODED_WAIT_SECONDS, finishes the job from its finished file without encoding again', async () => {
    const { w, c, created, films, own, restart } = await workerDyingAfterItsEncode('Beendet', { AGENT_GRACE_SECONDS: '2', ENCODED_WAIT_SECONDS: '600' });
    const inode = fs.statSync(own).ino;
    await waitFor('the longer wait', async () => (await jobLogs(c.url, created.body.id)).some((l) => /^worker stirbt@\S+ went offline after the encode had ended; the transcode waits up to 10 min for it to come back and finish/.test(l.message)), 30_000);
    const back = await restart();
    await back.proc.waitForLine(/the encode had ended before the worker restarted: finishing with 1 file\(s\)/, 30_000);
    const done = await waitForStatus(c.url, created.body.id, ['completed'], 60_000);
    assert.equal(done.transcode_node, back.node);
    assert.equal(done.output_path, path.dirname(own));
    assert.equal(fs.statSync(own).ino, inode, 'the very file encoded before the crash');
    assert.deepEqual(fs.readdirSync(films), ['Beendet']);
    assert.equal(fs.existsSync(path.join(w.raw, created.body.id)), false, 'the raw folder went once the job was finished');
    const logs = await jobLogs(c.url, created.body.id);
    assert.equal(logs.filter((l) => /^transcode started on /.test(l.message)).length, 1, 'one encode');
    assert.ok(logs.some((l) => /^worker stirbt@\S+ restarted and finishes the transcode, whose encode had ended$/.test(l.message)));
    assert.equal(logs.filter((l) => /^finished:/.test(l.message)).length, 1);
    const detail = await api<JobDetail>(c.url, 'GET', `/jobs/${created.body.id}/detail`);
    assert.deepEqual(detail.body.streams.map((s) => [s.file, s.audio.length > 0]), [['Beendet.mkv', true]], 'the streams come from the scan after the restart');
  });

  it('a worker that dies after its encode but before storing job_done removes its own files once its leftover task is canceled, never the redone encode', async () => {
    const { c, ripper, created, films, own, restart } = await workerDyingAfterItsEncode('Leftover', { AGENT_GRACE_SECONDS: '4', ENCODED_WAIT_SECONDS: '3' });

    const done = await waitForStatus(c.url, created.body.id, ['completed'], 120_000);
    assert.equal(done.transcode_node, ripper.node, 'the encode was redone by the other worker');
    assert.notEqual(done.output_path, path.dirname(own));
    assert.deepEqual(fs.readdirSync(films).sort(), ['Leftover', path.basename(done.output_path ?? '')].sort(), 'two folders while the dead worker is away');

    assert.ok((await jobLogs(c.url, created.body.id)).some((l) => /went offline after the encode had ended; the transcode waits up to 3 s/.test(l.message)));
    const back = await restart();
    await back.proc.waitForLine(/its transcode was canceled after the restart: removed 1 file\(s\)/, 30_000);
    assert.deepEqual(fs.readdirSync(films), [path.basename(done.output_path ?? '')], 'only the job\'s result is left');
    assert.ok(fs.readdirSync(done.output_path ?? '').some((f) => f.endsWith('.mkv')));
    await sleep(12_000); // the agent asks again every 10 s until its answer arrived
    const logs = await jobLogs(c.url, created.body.id);
    assert.equal(logs.filter((l) => /restarted holding command .*: canceled there/.test(l.message)).length, 1, 'the cancel is logged once');
    assert.equal((await job(c.url, created.body.id)).status, 'completed');
  });

  it('cancel stops the whole process tree of a hanging ripper', async () => {
    const w = world();
    const c = await startCoordinator(w);
    const pidFile = path.join(w.root, 'helper.pid');
    const a = await startAgent(w, c.mqttUrl, 'haenger', { makemkv: true, extra: { FAKE_MAKEMKV_MODE: 'hang', FAKE_MAKEMKV_PIDFILE: pidFile } });
    insertDisc(a.driveDir, dvdImage('HANGS', [6]));
    const device = await waitForDisc(c.url, a);
    const created = await api<Job>(c.url, 'POST', '/jobs', { device });
    assert.equal(created.status, 201, created.text);
    await waitForStatus(c.url, created.body.id, ['processing']);
    const helperPid = await waitFor('the ripper helper child', async () => (fs.existsSync(pidFile) ? Number(fs.readFileSync(pidFile, 'utf8')) : undefined));
    const alive = (pid: number): boolean => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    assert.ok(alive(helperPid));
    const r = await api<Job>(c.url, 'POST', `/jobs/${created.body.id}/cancel`);
    assert.equal(r.body.status, 'canceling');
    await waitForStatus(c.url, created.body.id, ['canceled'], 30_000);
    await waitFor('the helper child to be gone', async () => !alive(helperPid), 10_000);
    assert.deepEqual(processesMentioning(path.join(a.driveDir, 'HANGS.iso')), []);
    const device2 = await api<Device[]>(c.url, 'GET', '/devices');
    assert.equal(device2.body.find((d) => d.name === device)?.busy_job, null, 'the drive is free again');
  });

  it('a coordinator restart mid-transcode ends the job once', async () => {
    const w = world();
    const c = await startCoordinator(w);
    await api(c.url, 'PUT', '/settings', { transcodePreset: 'Very Fast 480p30' });
    const a = await startAgent(w, c.mqttUrl, 'buero', { extra: { HANDBRAKE_CLI: slowHandbrake(4) } });
    insertDisc(a.driveDir, dvdImage('RESTART', [8]));
    const device = await waitForDisc(c.url, a);
    const created = await api<Job>(c.url, 'POST', '/jobs', { device });
    assert.equal(created.status, 201, created.text);
    await waitForStatus(c.url, created.body.id, ['transcoding']);
    await waitFor('transcode started', async () => (await jobLogs(c.url, created.body.id)).some((l) => /transcode started/.test(l.message)));

    await c.proc.kill('SIGKILL');
    await sleep(6000); // the transcode finishes while the coordinator is down
    const c2 = await startCoordinator(w, {}, { port: c.port, mqttPort: c.mqttPort });
    const done = await waitForStatus(c2.url, created.body.id, ['completed'], 60_000);
    assert.equal(done.progress, 100);
    await sleep(2000);
    const logs = await jobLogs(c2.url, created.body.id);
    assert.equal(logs.filter((l) => /^finished:/.test(l.message)).length, 1, 'the job ended exactly once');
    assert.equal(a.proc.lines.filter((l) => /transcoding title_t01\.mkv/.test(l)).length, 1, 'the encoder ran once');
    assert.equal(fs.readdirSync(path.join(w.media, 'Filme')).length, 1);
  });

  it('an agent asked to stop while its broker is frozen stops within seconds, and its next start is online again', async () => {
    const w = world();
    const c = await startCoordinator(w);
    const a = await startAgent(w, c.mqttUrl, 'keller');
    const pid = c.proc.child.pid as number;
    // The broker takes the connection but answers nothing: the agent's offline word is never acknowledged.
    process.kill(pid, 'SIGSTOP');
    try {
      const t0 = Date.now();
      // Bounded here, so that an agent that hangs fails the test instead of stalling it.
      await Promise.race([a.proc.kill('SIGTERM'), sleep(10_000)]);
      const took = Date.now() - t0;
      assert.ok(took < 6000, `the agent took ${took} ms to stop`);
      assert.equal(a.proc.child.exitCode, 0, a.proc.lines.slice(-5).join('\n'));
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    // The connection it dropped makes the thawed broker publish its will: offline.
    await waitFor('keller offline', async () => (await api<Worker[]>(c.url, 'GET', '/capabilities')).body.find((x) => x.name === 'keller' && !x.online));
    await restartAgent(a);
    await waitFor('keller online again', async () => (await api<Worker[]>(c.url, 'GET', '/capabilities')).body.find((x) => x.name === 'keller' && x.online));
  });

  it('a worker killed mid-transcode and back within the grace period runs the transcode again only once the coordinator confirms it', async () => {
    const w = world();
    const c = await startCoordinator(w, { AGENT_GRACE_SECONDS: '120' });
    await api(c.url, 'PUT', '/settings', { transcodePreset: 'Very Fast 480p30' });
    const a = await startAgent(w, c.mqttUrl, 'keller', { extra: { HANDBRAKE_CLI: slowHandbrake(6) } });
    insertDisc(a.driveDir, dvdImage('COMEBACK', [8]));
    const device = await waitForDisc(c.url, a);
    const created = await api<Job>(c.url, 'POST', '/jobs', { device });
    assert.equal(created.status, 201, created.text);
    await waitFor('transcode started', async () => (await jobLogs(c.url, created.body.id)).some((l) => /transcode started/.test(l.message)));

    await a.proc.kill('SIGKILL');
    const back = await restartAgent(a);
    await back.proc.waitForLine(/task\(s\) left from the last run wait for the coordinator to confirm them/);
    await back.proc.waitForLine(/resuming the transcode after a restart: the coordinator confirmed it/, 30_000);
    const done = await waitForStatus(c.url, created.body.id, ['completed'], 90_000);
    assert.equal(done.transcode_node, a.node);
    const logs = await jobLogs(c.url, created.body.id);
    assert.ok(logs.some((l) => /worker keller@\S+ restarted and runs the transcode again from the start/.test(l.message)));
    assert.equal(logs.filter((l) => /^finished:/.test(l.message)).length, 1, 'the job ended exactly once');
    assert.deepEqual(fs.readdirSync(path.join(w.media, 'Filme')), ['Comeback']);
  });

  it('a 20 s outage of a Mosquitto broker loses no event', async () => {
    const w = world();
    const mqttPort = await freePort();
    let broker = await startMosquitto(mqttPort);
    const mqttUrl = `mqtt://127.0.0.1:${mqttPort}`;
    const c = await startCoordinator(w, { MQTT_URL: mqttUrl });
    await api(c.url, 'PUT', '/settings', { transcodePreset: 'Very Fast 480p30' });
    const a = await startAgent(w, mqttUrl, 'keller', { extra: { HANDBRAKE_CLI: slowHandbrake(2) } });
    insertDisc(a.driveDir, dvdImage('OUTAGE', [8]));
    const device = await waitForDisc(c.url, a);
    const created = await api<Job>(c.url, 'POST', '/jobs', { device });
    assert.equal(created.status, 201, created.text);
    await waitFor('transcode started', async () => (await jobLogs(c.url, created.body.id)).some((l) => /transcode started/.test(l.message)));

    await broker.kill('SIGTERM');
    const downAt = Date.now();
    await a.proc.waitForLine(/unreachable; events are kept in the outbox/, 15_000);
    await sleep(20_000 - (Date.now() - downAt));
    const during = await job(c.url, created.body.id);
    assert.equal(during.status, 'transcoding', 'nothing reached the coordinator during the outage');
    broker = await startMosquitto(mqttPort);

    const done = await waitForStatus(c.url, created.body.id, ['completed'], 60_000);
    assert.equal(done.progress, 100);
    const messages = (await jobLogs(c.url, created.body.id)).map((l) => l.message);
    for (const expected of [/accepted the rip/, /rip started/, /rip finished/, /accepted the transcode/, /transcode started/, /^finished:/]) {
      assert.ok(messages.some((m) => expected.test(m)), `job log has ${expected}`);
    }
    assert.ok(messages.some((m) => /transcoding title_t01\.mkv/.test(m)), 'the agent\'s own log lines arrived');
    await waitFor('the outbox to drain', async () => {
      const db = new Database(path.join(a.env.DATA_DIR, 'agent-keller.sqlite'), { readonly: true, fileMustExist: true });
      try {
        return (db.prepare('SELECT COUNT(*) AS n FROM outbox').get() as { n: number }).n === 0;
      } finally {
        db.close();
      }
    }, 20_000);
  });
});
