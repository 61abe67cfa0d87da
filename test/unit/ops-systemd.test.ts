import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { REPO_DIR } from '../fixtures/tools-samples.js';

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

describe('reverse proxy sample', () => {
  it('sets X-Real-IP, allows 64 MB bodies and waits 3600 s on long transfers', () => {
    const conf = fs.readFileSync(path.join(REPO_DIR, 'deploy', 'nginx-ripwerk.conf'), 'utf8');
    assert.match(conf, /^\s*proxy_set_header X-Real-IP \$remote_addr;$/m);
    assert.match(conf, /^\s*client_max_body_size 64m;$/m);
    assert.match(conf, /^\s*proxy_read_timeout 3600s;$/m);
    assert.match(conf, /^\s*proxy_pass http:\/\/127\.0\.0\.1:8080;$/m);
  });
});
