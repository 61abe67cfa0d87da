/**
 * scripts/install.sh into a throwaway root: the system commands are small fakes that log their
 * arguments (and keep the state a real system would: created users, installed packages, enabled
 * units), so nothing on this machine changes.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { REPO_DIR } from '../fixtures/tools-samples.js';

const base = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-install-'));
after(() => fs.rmSync(base, { recursive: true, force: true }));
const SCRIPT = path.join(REPO_DIR, 'scripts', 'install.sh');

interface Sandbox {
  root: string;
  log: string;
  env: Record<string, string>;
}

/** Fake system commands sharing one state folder; each appends "name args" to the log. */
function sandbox(name: string, extra: Record<string, string> = {}): Sandbox {
  const dir = path.join(base, name);
  const root = path.join(dir, 'root');
  const bin = path.join(dir, 'bin');
  const state = path.join(dir, 'state');
  for (const d of [root, bin, state]) fs.mkdirSync(d, { recursive: true });
  const log = path.join(dir, 'calls.log');
  fs.writeFileSync(log, '');
  const fake = (cmd: string, body: string) => fs.writeFileSync(path.join(bin, cmd), `#!/bin/sh\necho "${cmd} $*" >> "${log}"\n${body}\n`, { mode: 0o755 });
  fake('apt-get', `[ "$1" = install ] && for p in "$@"; do touch "${state}/pkg-$p"; done; exit 0`);
  fake('dpkg-query', `p=$(eval echo \\$$#); [ -e "${state}/pkg-$p" ] && printf 'install ok installed' && exit 0; exit 1`);
  fake('getent', `[ -e "${state}/$1-$2" ] || exit 2; echo "$2:x:999:"`);
  fake('groupadd', `touch "${state}/group-$(eval echo \\$$#)"`);
  fake('useradd', `touch "${state}/passwd-$(eval echo \\$$#)"`);
  fake('usermod', `touch "${state}/cdrom-member"`);
  fake('id', `[ -e "${state}/cdrom-member" ] && echo "ripwerk cdrom" || echo ripwerk`);
  fake('chown', 'exit 0');
  fake('npm', 'mkdir -p node_modules; exit 0');
  fake('systemctl', `case "$1" in is-active) [ -e "${state}/active" ];; enable) touch "${state}/active";; *) exit 0;; esac`);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    RIPWERK_ROOT: root,
    NODE: process.execPath,
    ...Object.fromEntries(
      [
        ['APT_GET', 'apt-get'],
        ['DPKG_QUERY', 'dpkg-query'],
        ['GETENT', 'getent'],
        ['GROUPADD', 'groupadd'],
        ['USERADD', 'useradd'],
        ['USERMOD', 'usermod'],
        ['ID', 'id'],
        ['CHOWN', 'chown'],
        ['NPM', 'npm'],
        ['SYSTEMCTL', 'systemctl'],
      ].map(([k, v]) => [k, path.join(bin, v)]),
    ),
    ...extra,
  };
  return { root, log, env };
}

function run(s: Sandbox, args: string[]) {
  fs.writeFileSync(s.log, '');
  const r = spawnSync('bash', [SCRIPT, ...args], { env: s.env, encoding: 'utf8' });
  return { status: r.status, out: `${r.stdout}${r.stderr}`, calls: fs.readFileSync(s.log, 'utf8').trim().split('\n').filter(Boolean) };
}

describe('scripts/install.sh into a throwaway root', () => {
  it('passes bash -n', () => {
    assert.equal(spawnSync('bash', ['-n', SCRIPT]).status, 0);
  });

  it('installs the all-in-one service, and a second run changes nothing and keeps the edited env file', () => {
    const s = sandbox('all');
    const first = run(s, []);
    assert.equal(first.status, 0, first.out);
    assert.ok(first.calls.some((c) => /^apt-get install -y -qq --no-install-recommends handbrake-cli ffmpeg lsdvd dvdbackup abcde cdparanoia flac eject setcd python3 ca-certificates$/.test(c)), first.calls.join('\n'));
    assert.ok(first.calls.includes('groupadd --system ripwerk'));
    assert.ok(first.calls.includes('useradd --system --gid ripwerk --home-dir /var/lib/ripwerk --no-create-home --shell /usr/sbin/nologin ripwerk'));
    assert.ok(first.calls.includes('usermod -aG cdrom ripwerk'));
    assert.ok(first.calls.includes('npm ci --omit=dev --no-audit --no-fund'));
    assert.ok(first.calls.includes('systemctl daemon-reload'));
    assert.ok(first.calls.includes('systemctl enable --now ripwerk.service'));
    assert.ok(first.calls.includes('chown root:ripwerk ' + path.join(s.root, 'etc/ripwerk/ripwerk.env')));
    const unit = fs.readFileSync(path.join(s.root, 'etc/systemd/system/ripwerk.service'), 'utf8');
    assert.match(unit, new RegExp(`^ExecStart=${process.execPath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} /opt/ripwerk/dist/coordinator/cli-all-in-one.js$`, 'm'));
    assert.ok(fs.existsSync(path.join(s.root, 'opt/ripwerk/dist/coordinator/cli-all-in-one.js')));
    assert.ok(fs.existsSync(path.join(s.root, 'opt/ripwerk/dist/ui/index.html')));
    assert.deepEqual(fs.readFileSync(path.join(s.root, 'opt/ripwerk/package-lock.json')), fs.readFileSync(path.join(REPO_DIR, 'package-lock.json')));
    const envFile = path.join(s.root, 'etc/ripwerk/ripwerk.env');
    assert.equal(fs.statSync(envFile).mode & 0o777, 0o640);
    assert.match(fs.readFileSync(envFile, 'utf8'), /^MEDIA_ROOT=\/srv\/media$/m);
    for (const d of ['var/lib/ripwerk', 'srv/media', 'srv/media/raw', 'etc/ripwerk']) assert.ok(fs.statSync(path.join(s.root, d)).isDirectory(), d);
    assert.match(first.out, /Done \(\d+ changes\)/);

    fs.appendFileSync(envFile, 'WORKER_NAME=keller\n');
    const second = run(s, []);
    assert.equal(second.status, 0, second.out);
    assert.match(second.out, /Nothing changed: Ripwerk \(all\) is installed and ripwerk.service is running\./);
    assert.ok(!second.calls.some((c) => c.startsWith('apt-get') || c.startsWith('useradd') || c.startsWith('npm') || c.includes('enable') || c.includes('daemon-reload')), second.calls.join('\n'));
    assert.match(fs.readFileSync(envFile, 'utf8'), /^WORKER_NAME=keller$/m, 'the user\'s edit stays');
  });

  it('sets up an agent-only host with the coordinator\'s broker and secret; refuses --agent without it', () => {
    const s = sandbox('agent');
    const refused = run(s, ['--agent']);
    assert.equal(refused.status, 2);
    assert.match(refused.out, /--agent needs --coordinator-url mqtt:\/\/<coordinator host>:1883/);
    assert.equal(run(s, ['--agent', '--coordinator-url', 'http://x']).status, 2);
    const r = run(s, ['--agent', '--coordinator-url', 'mqtt://server:1883', '--broker-secret', 's3cret']);
    assert.equal(r.status, 0, r.out);
    const env = fs.readFileSync(path.join(s.root, 'etc/ripwerk/agent.env'), 'utf8');
    assert.match(env, /^MQTT_URL=mqtt:\/\/server:1883$/m);
    assert.doesNotMatch(env, /^#MQTT_URL=/m);
    assert.match(env, /^RIPWERK_BROKER_SECRET=s3cret$/m);
    assert.ok(r.calls.includes('systemctl enable --now ripwerk-agent.service'));
    assert.ok(fs.existsSync(path.join(s.root, 'etc/systemd/system/ripwerk-agent.service')));
    assert.ok(!r.out.includes('s3cret'), 'the secret is not printed');
    const moved = run(s, ['--agent', '--coordinator-url', 'mqtt://nas:1883']);
    assert.match(moved.out, /set MQTT_URL in \/etc\/ripwerk\/agent.env/);
    assert.equal(fs.readFileSync(path.join(s.root, 'etc/ripwerk/agent.env'), 'utf8').match(/^MQTT_URL=/gm)?.length, 1);
  });

  it('installs only the coordinator without tool packages or the cdrom group', () => {
    const s = sandbox('coordinator');
    const r = run(s, ['--coordinator']);
    assert.equal(r.status, 0, r.out);
    assert.ok(!r.calls.some((c) => c.startsWith('apt-get') || c.startsWith('usermod')), r.calls.join('\n'));
    assert.ok(r.calls.includes('systemctl enable --now ripwerk-coordinator.service'));
    assert.ok(fs.existsSync(path.join(s.root, 'etc/ripwerk/coordinator.env')));
  });

  it('brings its own Node.js when the system\'s is older than 20.19, and runs the unit on it', () => {
    const dist = path.join(base, 'node-dist');
    fs.mkdirSync(path.join(dist, 'node-v20.19.5-linux-x64', 'bin'), { recursive: true });
    fs.writeFileSync(path.join(dist, 'node-v20.19.5-linux-x64', 'bin', 'node'), '#!/bin/sh\necho v20.19.5\n', { mode: 0o755 });
    const tarball = path.join(base, 'node.tar.gz');
    assert.equal(spawnSync('tar', ['-czf', tarball, '-C', dist, 'node-v20.19.5-linux-x64']).status, 0);
    const oldNode = path.join(base, 'node18');
    fs.writeFileSync(oldNode, '#!/bin/sh\necho v18.19.0\n', { mode: 0o755 });
    const curl = path.join(base, 'fake-curl');
    fs.writeFileSync(curl, `#!/bin/sh\ncat "${tarball}"\n`, { mode: 0o755 });
    const s = sandbox('old-node', { NODE: oldNode, CURL: curl, NODE_DIST_URL: 'https://nodejs.example/node.tar.gz' });
    const r = run(s, ['--coordinator']);
    assert.equal(r.status, 0, r.out);
    assert.match(r.out, /installed Node.js from https:\/\/nodejs.example\/node.tar.gz into \/opt\/ripwerk\/node/);
    assert.ok(fs.existsSync(path.join(s.root, 'opt/ripwerk/node/bin/node')));
    assert.match(fs.readFileSync(path.join(s.root, 'etc/systemd/system/ripwerk-coordinator.service'), 'utf8'), /^ExecStart=\/opt\/ripwerk\/node\/bin\/node \/opt\/ripwerk\/dist\/coordinator\/cli.js$/m);
    const again = run(s, ['--coordinator']);
    assert.match(again.out, /Nothing changed/);
  });
});
