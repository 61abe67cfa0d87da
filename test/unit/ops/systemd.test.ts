import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { REPO_DIR } from '../../fixtures/tools-samples.js';

const UNITS = ['ripwerk.service', 'ripwerk-coordinator.service', 'ripwerk-agent.service'];
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-units-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

/** The unit as it would be installed, with /opt/ripwerk pointing at this checkout (whose dist/ is built). */
function installed(unit: string): string {
  const text = fs.readFileSync(path.join(REPO_DIR, 'systemd', unit), 'utf8').replaceAll('/opt/ripwerk', REPO_DIR).replace('/usr/bin/node', process.execPath);
  const file = path.join(root, unit);
  fs.writeFileSync(file, text);
  return file;
}

const analyze = (args: string[]) => spawnSync('systemd-analyze', args, { encoding: 'utf8' });
const hasAnalyze = analyze(['--version']).status === 0;

describe('systemd units', { skip: hasAnalyze ? false : 'systemd-analyze is not installed' }, () => {
  for (const unit of UNITS) {
    it(`${unit} passes systemd-analyze verify without a word`, () => {
      const r = analyze(['verify', '--man=no', installed(unit)]);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(`${r.stdout}${r.stderr}`.trim(), '');
    });

    it(`${unit} is hardened (offline security exposure at most 5.0)`, () => {
      const r = analyze(['security', '--offline=true', '--threshold=50', installed(unit)]);
      assert.equal(r.status, 0, r.stdout.split('\n').slice(-3).join('\n'));
      const score = /Overall exposure level for \S+: (\d+\.\d)/.exec(r.stdout);
      assert.ok(score, r.stdout.slice(-300));
      assert.ok(Number(score[1]) <= 5, `exposure ${score[1]}`);
    });
  }

  it('runs as the ripwerk user; only units with drives get the cdrom group and the sr/sg devices', () => {
    for (const unit of UNITS) {
      const text = fs.readFileSync(path.join(REPO_DIR, 'systemd', unit), 'utf8');
      assert.match(text, /^User=ripwerk$/m);
      assert.match(text, /^Restart=on-failure$/m);
      assert.match(text, /^EnvironmentFile=-\/etc\/ripwerk\/\S+\.env$/m);
      const drives = unit !== 'ripwerk-coordinator.service';
      assert.equal(/^SupplementaryGroups=cdrom$/m.test(text), drives, unit);
      assert.equal(/^DeviceAllow=block-sr rw$/m.test(text), drives, unit);
      assert.equal(/^PrivateDevices=yes$/m.test(text), !drives, unit);
    }
  });
});

describe('the mounts drop-in (systemd/ripwerk-mounts.conf)', () => {
  const dropin = fs.readFileSync(path.join(REPO_DIR, 'systemd', 'ripwerk-mounts.conf'), 'utf8');
  const value = (text: string, key: string) => [...text.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].map((m) => m[1]).at(-1);
  /** Settings that give a unit a mount namespace of its own, whose mounts never reach the host (systemd.exec(5)). */
  const NAMESPACING = ['ProtectSystem', 'ProtectHome', 'PrivateTmp', 'PrivateMounts', 'PrivateDevices', 'ReadWritePaths', 'ReadOnlyPaths', 'InaccessiblePaths', 'ProtectKernelTunables', 'ProtectKernelModules', 'ProtectKernelLogs', 'ProtectControlGroups', 'TemporaryFileSystem', 'BindPaths', 'MountFlags', 'ProtectProc', 'ProcSubset'];

  it('turns off every setting of the units that would hide the service\'s mounts from the host', () => {
    for (const unit of ['ripwerk.service', 'ripwerk-coordinator.service']) {
      const text = fs.readFileSync(path.join(REPO_DIR, 'systemd', unit), 'utf8');
      for (const key of NAMESPACING) {
        const inUnit = value(text, key);
        if (inUnit === undefined || inUnit === '' || inUnit === 'no' || inUnit === 'default' || inUnit === 'all') continue;
        assert.ok(['no', ''].includes(value(dropin, key) ?? 'unset'), `${unit} sets ${key}=${inUnit}; the drop-in must reset it`);
      }
    }
    assert.equal(value(dropin, 'User'), 'root', 'mount(8) mounts for root only');
    assert.equal(value(dropin, 'Group'), 'ripwerk', 'files stay readable for the group ripwerk');
    assert.equal(value(dropin, 'NoNewPrivileges'), 'no');
    assert.match(value(dropin, 'CapabilityBoundingSet') ?? '', /\bCAP_SYS_ADMIN\b/);
  });

  it('passes systemd-analyze verify together with the unit', { skip: hasAnalyze ? false : 'systemd-analyze is not installed' }, () => {
    // Offline verify reads no drop-in folder: the drop-in's lines are appended to the unit, as systemd merges them.
    const file = path.join(root, 'ripwerk-with-mounts.service');
    fs.writeFileSync(file, `${fs.readFileSync(installed('ripwerk.service'), 'utf8')}\n${dropin}`);
    const r = analyze(['verify', '--man=no', file]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(`${r.stdout}${r.stderr}`.trim(), '');
  });
});

describe('reverse proxy sample', () => {
  it('sets X-Real-IP, allows 64 MB bodies and waits 3600 s on long transfers', () => {
    const conf = fs.readFileSync(path.join(REPO_DIR, 'deploy', 'nginx-ripwerk.conf'), 'utf8');
    assert.match(conf, /^\s*proxy_set_header X-Real-IP \$remote_addr;$/m);
    assert.match(conf, /^\s*client_max_body_size 64m;$/m);
    assert.match(conf, /^\s*proxy_read_timeout 3600s;$/m);
    assert.match(conf, /^\s*proxy_pass http:\/\/127\.0\.0\.1:8080;$/m);
  });
});
