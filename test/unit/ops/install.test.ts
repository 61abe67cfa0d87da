/**
 * scripts/install.sh into a throwaway root. Every system command is a small fake that logs its
 * arguments and keeps the state a real system would (created users, installed packages, owners,
 * enabled units); the fakes are both named in the installer's override variables and first on PATH,
 * so nothing on this machine changes even if the script called a command directly. The app comes
 * from a small fake checkout (RIPWERK_SRC) with the real unit files and env example, so a build
 * running elsewhere in this tree cannot change what a run copies.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { REPO_DIR } from '../../fixtures/tools-samples.js';

const SCRIPT = path.join(REPO_DIR, 'scripts', 'install.sh');
const EXAMPLE = fs.readFileSync(path.join(REPO_DIR, 'systemd', 'ripwerk.env.example'), 'utf8');
const TOOLS = 'handbrake-cli ffmpeg mkvtoolnix lsdvd dvdbackup abcde cdparanoia flac libcdio-utils eject setcd python3';
const base = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-install-'));
after(() => fs.rmSync(base, { recursive: true, force: true }));

/** One dispatcher for all fakes: $S is the state folder, $L the call log. */
const FAKE = String.raw`
name=$(basename "$0")
if [ "$name" = npm ]; then echo "npm $* @ $PWD" >>"$L"; else echo "$name $*" >>"$L"; fi
case "$name" in
  apt-get)
    [ "$1" = install ] || exit 0
    for p in "$@"; do
      case "$p" in -* | install) ;; *) touch "$S/pkg-$p" ;; esac
      if [ "$p" = nodejs ] && [ -f "$S/node-after-apt" ]; then cp "$S/node-after-apt" "$S/node-version"; fi
    done ;;
  apt-cache) printf 'nodejs:\n  Installed: (none)\n  Candidate: %s\n' "$(cat "$S/apt-candidate" 2>/dev/null || echo '(none)')" ;;
  dpkg-query) eval "p=\${$#}"; [ -e "$S/pkg-$p" ] || exit 1; printf 'install ok installed' ;;
  getent) [ -e "$S/$1-$2" ] || exit 2; echo "$2:x:999:" ;;
  groupadd) eval "n=\${$#}"; touch "$S/group-$n" ;;
  useradd) eval "n=\${$#}"; touch "$S/passwd-$n" ;;
  usermod) touch "$S/member-cdrom" ;;
  id) if [ -e "$S/member-cdrom" ]; then echo "ripwerk cdrom"; else echo ripwerk; fi ;;
  chown) echo "$2 $1" >>"$S/owners" ;;
  fake-stat)
    if [ "$1" = -c ] && [ "$2" = %U:%G ]; then
      o=$(awk -v p="$3" '$1 == p { o = $2 } END { print o }' "$S/owners" 2>/dev/null)
      if [ -n "$o" ]; then echo "$o"; exit 0; fi
    fi
    exec stat "$@" ;;
  npm)
    case "$1" in
      ci) mkdir -p node_modules ;;
      run) mkdir -p dist/coordinator dist/ui && echo built >dist/coordinator/cli.js && echo '<html>' >dist/ui/index.html ;;
    esac ;;
  systemctl)
    case "$1" in
      is-enabled) [ -e "$S/enabled-$3" ] ;;
      is-active) [ -e "$S/active-$3" ] ;;
      enable) if [ "$2" = --now ]; then touch "$S/enabled-$3" "$S/active-$3"; else touch "$S/enabled-$2"; fi ;;
      start | restart) touch "$S/active-$2" ;;
    esac ;;
  curl) case "$4" in *SHASUMS256.txt) cp "$S/shasums" "$3" ;; *) cp "$S/tarball" "$3" ;; esac ;;
  node) cat "$S/node-version" ;;
  debconf-set-selections) cat >>"$S/debconf" ;;
  dpkg-reconfigure) [ "$1" = libdvd-pkg ] && [ -e "$S/pkg-libdvd-pkg" ] && touch "$S/pkg-libdvdcss2" ;;
esac
`;
const FAKES = ['apt-get', 'apt-cache', 'dpkg-query', 'getent', 'groupadd', 'useradd', 'usermod', 'id', 'chown', 'fake-stat', 'npm', 'systemctl', 'runuser', 'curl', 'debconf-set-selections', 'dpkg-reconfigure'];
const OVERRIDES: Record<string, string> = {
  APT_GET: 'apt-get', APT_CACHE: 'apt-cache', DPKG_QUERY: 'dpkg-query', GETENT: 'getent', GROUPADD: 'groupadd', USERADD: 'useradd',
  USERMOD: 'usermod', ID: 'id', CHOWN: 'chown', STAT: 'fake-stat', NPM: 'npm', SYSTEMCTL: 'systemctl', RUNUSER: 'runuser', CURL: 'curl',
  DEBCONF_SET_SELECTIONS: 'debconf-set-selections', DPKG_RECONFIGURE: 'dpkg-reconfigure',
};

interface Sandbox {
  dir: string;
  root: string;
  src: string;
  state: string;
  log: string;
  node: string;
  env: Record<string, string>;
}

/** A fake checkout: the real package files, units and env example, and a small built dist/. */
function fakeCheckout(dir: string, built: boolean): string {
  const src = path.join(dir, 'src');
  fs.mkdirSync(path.join(src, 'systemd'), { recursive: true });
  for (const f of fs.readdirSync(path.join(REPO_DIR, 'systemd'))) fs.copyFileSync(path.join(REPO_DIR, 'systemd', f), path.join(src, 'systemd', f));
  for (const f of ['package.json', 'package-lock.json']) fs.copyFileSync(path.join(REPO_DIR, f), path.join(src, f));
  const past = new Date(Date.now() - 3600_000);
  fs.utimesSync(path.join(src, 'package-lock.json'), past, past);
  if (built) {
    const files: Record<string, string> = {
      'coordinator/cli.js': 'coordinator\n',
      'coordinator/cli-all-in-one.js': 'all in one\n',
      'agent/cli.js': 'agent\n',
      'shared/config.js': 'config\n',
      'ui/index.html': '<html>\n',
      'test/unit/ops-install.test.js': 'a test\n',
      'scripts/bench.js': 'bench\n',
    };
    for (const [f, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(src, 'dist', f)), { recursive: true });
      fs.writeFileSync(path.join(src, 'dist', f), text);
    }
  }
  return src;
}

function sandbox(name: string, opts: { built?: boolean; booted?: boolean; env?: Record<string, string> } = {}): Sandbox {
  const dir = path.join(base, name);
  const root = path.join(dir, 'root');
  const bin = path.join(dir, 'bin');
  const state = path.join(dir, 'state');
  const nodeDir = path.join(dir, 'nodebin');
  for (const d of [root, bin, state, nodeDir]) fs.mkdirSync(d, { recursive: true });
  if (opts.booted !== false) fs.mkdirSync(path.join(root, 'run/systemd/system'), { recursive: true });
  const log = path.join(dir, 'calls.log');
  fs.writeFileSync(log, '');
  const fake = path.join(dir, 'fake.sh');
  fs.writeFileSync(fake, `#!/bin/sh\nS='${state}'\nL='${log}'\n${FAKE}`, { mode: 0o755 });
  for (const f of FAKES) fs.symlinkSync(fake, path.join(bin, f));
  fs.writeFileSync(path.join(state, 'group-cdrom'), ''); // Debian's base-passwd has it
  // The node the unit should run: a wrapper outside /usr/bin, so the ExecStart rewrite shows.
  const node = path.join(nodeDir, 'node');
  fs.writeFileSync(node, `#!/bin/sh\nexec '${process.execPath}' "$@"\n`, { mode: 0o755 });
  const env: Record<string, string> = {
    PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    TMPDIR: dir,
    RIPWERK_ROOT: root,
    RIPWERK_SRC: fakeCheckout(dir, opts.built !== false),
    NODE: node,
    ...Object.fromEntries(Object.entries(OVERRIDES).map(([k, v]) => [k, path.join(bin, v)])),
    ...opts.env,
  };
  return { dir, root, src: env.RIPWERK_SRC, state, log, node: env.NODE, env };
}

function run(s: Sandbox, args: string[]) {
  fs.writeFileSync(s.log, '');
  const r = spawnSync('bash', [SCRIPT, ...args], { env: s.env, encoding: 'utf8' });
  return { status: r.status, out: `${r.stdout}${r.stderr}`, calls: fs.readFileSync(s.log, 'utf8').split('\n').filter(Boolean) };
}

/** run() without blocking the event loop: for runs that download from a server in this process. */
async function runAsync(s: Sandbox, args: string[]) {
  fs.writeFileSync(s.log, '');
  const child = spawn('bash', [SCRIPT, ...args], { env: s.env });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { status, out, calls: fs.readFileSync(s.log, 'utf8').split('\n').filter(Boolean) };
}

const read = (s: Sandbox, p: string) => fs.readFileSync(path.join(s.root, p), 'utf8');
const mode = (s: Sandbox, p: string) => fs.statSync(path.join(s.root, p)).mode & 0o777;
/** The unit as the installer should write it: the repository's, run on the given node. */
const expectedUnit = (unit: string, node: string) =>
  fs.readFileSync(path.join(REPO_DIR, 'systemd', unit), 'utf8').replace(/^ExecStart=\/usr\/bin\/node /m, `ExecStart=${node} `);
/** Calls that only look: a run that changes nothing makes no others. */
const QUERY = /^(dpkg-query|getent|id|fake-stat|node|systemctl is-enabled|systemctl is-active) /;
const changing = (calls: string[]) => calls.filter((c) => !QUERY.test(c));

const hasShellcheck = spawnSync('shellcheck', ['--version']).status === 0;

describe('scripts/install.sh', () => {
  it('passes bash -n', () => {
    const r = spawnSync('bash', ['-n', SCRIPT], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  });

  it('passes shellcheck', { skip: hasShellcheck ? false : 'shellcheck is not installed' }, () => {
    const r = spawnSync('shellcheck', [SCRIPT], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stdout);
  });

  it('--help prints the modes and options and touches nothing', () => {
    const s = sandbox('help');
    const r = run(s, ['--help']);
    assert.equal(r.status, 0, r.out);
    for (const word of ['--coordinator ', '--agent ', '--coordinator-url URL', '--broker-secret SECRET', '--broker-secret-file FILE', '--with-libdvdcss', '--with-makemkv [VERSION]', '--accept-makemkv-eula', '--with-mounts']) assert.ok(r.out.includes(word), word);
    assert.deepEqual(r.calls, []);
    assert.deepEqual(fs.readdirSync(s.root), ['run']);
  });

  it('installs the all-in-one service; a second run changes nothing and keeps the edited env file', () => {
    const s = sandbox('all');
    const first = run(s, []);
    assert.equal(first.status, 0, first.out);
    assert.deepEqual(first.calls.filter((c) => c.startsWith('apt-get')), ['apt-get update -qq', `apt-get install -y -qq --no-install-recommends ${TOOLS} ca-certificates`]);
    assert.ok(first.calls.includes('groupadd --system ripwerk'), first.calls.join('\n'));
    assert.ok(first.calls.includes('useradd --system --gid ripwerk --home-dir /var/lib/ripwerk --no-create-home --shell /usr/sbin/nologin ripwerk'));
    assert.ok(first.calls.includes('usermod -aG cdrom ripwerk'));
    assert.deepEqual(first.calls.filter((c) => c.startsWith('npm')), [`npm ci --omit=dev --no-audit --no-fund @ ${path.join(s.root, 'opt/ripwerk')}`], 'no build: the checkout is built');
    const sys = first.calls.filter((c) => c.startsWith('systemctl') && !QUERY.test(c));
    assert.deepEqual(sys, ['systemctl daemon-reload', 'systemctl enable --now ripwerk.service']);
    for (const [p, owner] of [['etc/ripwerk', 'root:ripwerk'], ['etc/ripwerk/ripwerk.env', 'root:ripwerk'], ['var/lib/ripwerk', 'ripwerk:ripwerk'], ['srv/media', 'ripwerk:ripwerk'], ['srv/media/raw', 'ripwerk:ripwerk']]) {
      assert.ok(first.calls.includes(`chown ${owner} ${path.join(s.root, p)}`), `${p} ${owner}\n${first.calls.join('\n')}`);
    }

    // What landed under the root.
    assert.equal(read(s, 'etc/systemd/system/ripwerk.service'), expectedUnit('ripwerk.service', s.node));
    assert.ok(!fs.existsSync(path.join(s.root, 'etc/systemd/system/ripwerk-agent.service')));
    assert.ok(!fs.existsSync(path.join(s.root, 'etc/systemd/system/ripwerk.service.d')), 'no drop-in while every folder is inside the unit\'s writable ones');
    assert.equal(read(s, 'etc/ripwerk/ripwerk.env'), EXAMPLE);
    assert.equal(mode(s, 'etc/ripwerk/ripwerk.env'), 0o640);
    assert.equal(mode(s, 'etc/ripwerk'), 0o750);
    assert.equal(mode(s, 'var/lib/ripwerk'), 0o700, 'as StateDirectoryMode= sets it at every start: the service user\'s only');
    assert.equal(mode(s, 'srv/media'), 0o755);
    assert.equal(mode(s, 'srv/media/raw'), 0o750);
    assert.equal(read(s, 'opt/ripwerk/dist/coordinator/cli-all-in-one.js'), 'all in one\n');
    assert.equal(read(s, 'opt/ripwerk/dist/ui/index.html'), '<html>\n');
    assert.equal(read(s, 'opt/ripwerk/package-lock.json'), fs.readFileSync(path.join(REPO_DIR, 'package-lock.json'), 'utf8'));
    assert.ok(!fs.existsSync(path.join(s.root, 'opt/ripwerk/dist/test')), 'compiled tests stay behind');
    assert.ok(!fs.existsSync(path.join(s.root, 'opt/ripwerk/dist/scripts')), 'the bench script stays behind');
    assert.match(first.out, /Done \(\d+ changes\)/);
    assert.match(first.out, /sudo cat \/var\/lib\/ripwerk\/broker-secret/);

    // Second run, after the user edited the env file: nothing to do.
    fs.appendFileSync(path.join(s.root, 'etc/ripwerk/ripwerk.env'), 'WORKER_NAME=keller\n');
    const second = run(s, []);
    assert.equal(second.status, 0, second.out);
    assert.match(second.out, /^Nothing changed: Ripwerk \(all\) is installed and ripwerk\.service is running\.$/m);
    assert.deepEqual(changing(second.calls), []);
    assert.equal(read(s, 'etc/ripwerk/ripwerk.env'), `${EXAMPLE}WORKER_NAME=keller\n`, 'the user\'s edit stays');

    // A new build: only the changed file is copied, a file the build dropped goes, the service restarts.
    fs.writeFileSync(path.join(s.src, 'dist/coordinator/cli.js'), 'coordinator v2\n');
    fs.writeFileSync(path.join(s.root, 'opt/ripwerk/dist/coordinator/gone.js'), 'old\n');
    const update = run(s, []);
    assert.equal(update.status, 0, update.out);
    assert.match(update.out, /copied the app to \/opt\/ripwerk \(2 files changed\)/);
    assert.equal(read(s, 'opt/ripwerk/dist/coordinator/cli.js'), 'coordinator v2\n');
    assert.ok(!fs.existsSync(path.join(s.root, 'opt/ripwerk/dist/coordinator/gone.js')));
    assert.deepEqual(changing(update.calls), ['systemctl restart ripwerk.service'], 'same lock file: no npm ci; same unit: no daemon-reload');
  });

  it('gives the unit write access to folders the env file moves outside /srv/media, and takes it back', () => {
    const s = sandbox('paths');
    assert.equal(run(s, []).status, 0);
    const envFile = path.join(s.root, 'etc/ripwerk/ripwerk.env');
    fs.writeFileSync(envFile, EXAMPLE.replace('MEDIA_ROOT=/srv/media', 'MEDIA_ROOT=/mnt/nas/media').replace('RAW_DIR=/srv/media/raw', 'RAW_DIR=/mnt/nas/raw'));
    const moved = run(s, []);
    assert.equal(moved.status, 0, moved.out);
    const dropin = 'etc/systemd/system/ripwerk.service.d/ripwerk-paths.conf';
    assert.match(read(s, dropin), /^\[Service\]\nReadWritePaths=-\/mnt\/nas\/media -\/mnt\/nas\/raw$/m);
    assert.ok(fs.statSync(path.join(s.root, 'mnt/nas/raw')).isDirectory());
    assert.ok(moved.calls.includes(`chown ripwerk:ripwerk ${path.join(s.root, 'mnt/nas/media')}`));
    assert.deepEqual(changing(moved.calls).filter((c) => c.startsWith('systemctl')), ['systemctl daemon-reload', 'systemctl restart ripwerk.service']);
    assert.match(run(s, []).out, /Nothing changed/);

    fs.writeFileSync(envFile, EXAMPLE);
    const back = run(s, []);
    assert.equal(back.status, 0, back.out);
    assert.ok(!fs.existsSync(path.join(s.root, dropin)));
    assert.ok(back.calls.includes('systemctl daemon-reload'));
  });

  it('sets up an agent-only host with the coordinator\'s broker and secret; refuses --agent without the URL', () => {
    const s = sandbox('agent');
    const refused = run(s, ['--agent']);
    assert.equal(refused.status, 2);
    assert.match(refused.out, /--agent needs --coordinator-url mqtt:\/\/<coordinator host>:1883/);
    assert.deepEqual(refused.calls, []);
    assert.deepEqual(fs.readdirSync(s.root), ['run'], 'nothing written');
    assert.match(run(s, ['--agent', '--coordinator-url', 'http://server:1883']).out, /must look like mqtt:\/\/host:1883/);
    assert.match(run(s, ['--coordinator-url', 'mqtt://server:1883']).out, /go with --agent/);
    assert.match(run(s, ['--agent', '--coordinator', '--coordinator-url', 'mqtt://server:1883']).out, /choose one of --agent and --coordinator/);
    assert.equal(run(s, ['--agent', '--coordinator-url', 'mqtt://server:1883', '--broker-secret', 'two words']).status, 2);

    // A media root that exists already (a mount, say) keeps its owner.
    fs.mkdirSync(path.join(s.root, 'srv/media'), { recursive: true });
    const secret = 'Zq3_x-Vb9kLmN0pQrStUvWxY';
    const r = run(s, ['--agent', '--coordinator-url', 'mqtt://server.lan:1883', '--broker-secret', secret]);
    assert.equal(r.status, 0, r.out);
    assert.equal(
      read(s, 'etc/ripwerk/agent.env'),
      `${EXAMPLE.replace('#MQTT_URL=mqtt://server:1883', 'MQTT_URL=mqtt://server.lan:1883')}RIPWERK_BROKER_SECRET=${secret}\n`,
      'MQTT_URL takes the place of the commented line, the secret is added, the rest is the example',
    );
    assert.ok(!r.out.includes(secret), 'the secret is never printed');
    assert.match(r.out, /set RIPWERK_BROKER_SECRET=\(not shown\)/);
    assert.ok(r.calls.includes(`apt-get install -y -qq --no-install-recommends ${TOOLS} ca-certificates`));
    assert.ok(r.calls.includes('usermod -aG cdrom ripwerk'));
    assert.ok(r.calls.includes('systemctl enable --now ripwerk-agent.service'));
    assert.equal(read(s, 'etc/systemd/system/ripwerk-agent.service'), expectedUnit('ripwerk-agent.service', s.node));
    assert.ok(!r.calls.includes(`chown ripwerk:ripwerk ${path.join(s.root, 'srv/media')}`), 'an existing media root is not taken over');
    assert.match(r.out, /note: \/srv\/media belongs to \S+, not ripwerk/);
    assert.ok(r.calls.includes(`chown ripwerk:ripwerk ${path.join(s.root, 'srv/media/raw')}`), 'the raw folder it created is ripwerk\'s');

    // The coordinator moved; the secret comes from a file this time, the user's edit stays.
    fs.appendFileSync(path.join(s.root, 'etc/ripwerk/agent.env'), 'WORKER_NAME=keller\n');
    const secretFile = path.join(s.dir, 'secret');
    fs.writeFileSync(secretFile, `${secret}\n`);
    const moved = run(s, ['--agent', '--coordinator-url', 'mqtt://nas:1883', '--broker-secret-file', secretFile]);
    assert.equal(moved.status, 0, moved.out);
    assert.match(moved.out, /set MQTT_URL=mqtt:\/\/nas:1883 in \/etc\/ripwerk\/agent\.env/);
    assert.doesNotMatch(moved.out, /set RIPWERK_BROKER_SECRET/, 'same secret: untouched');
    const env = read(s, 'etc/ripwerk/agent.env');
    assert.equal(env.match(/^MQTT_URL=.*$/gm)?.join(), 'MQTT_URL=mqtt://nas:1883');
    assert.match(env, /^WORKER_NAME=keller$/m);
    assert.deepEqual(changing(moved.calls), ['systemctl restart ripwerk-agent.service']);
    const again = run(s, ['--agent', '--coordinator-url', 'mqtt://nas:1883']);
    assert.match(again.out, /^Nothing changed: Ripwerk \(agent\) is installed and ripwerk-agent\.service is running\.$/m);

    // The agent's own MQTT credentials (POST /api/workers/{name}/credentials): the password from a file, never printed.
    const pwFile = path.join(s.dir, 'mqtt-password');
    const password = 'aB3_dE6-gH9iJ2kL5mN8oP1qR4sT7uV';
    fs.writeFileSync(pwFile, `${password}\n`);
    assert.match(run(s, ['--agent', '--coordinator-url', 'mqtt://nas:1883', '--mqtt-username', 'keller']).out, /--mqtt-username and --mqtt-password-file go together/);
    assert.match(run(s, ['--agent', '--coordinator-url', 'mqtt://nas:1883', '--mqtt-username', 'kel/ler', '--mqtt-password-file', pwFile]).out, /--mqtt-username may hold letters, digits and \. _ @ - only/);
    const own = run(s, ['--agent', '--coordinator-url', 'mqtt://nas:1883', '--mqtt-username', 'keller', '--mqtt-password-file', pwFile]);
    assert.equal(own.status, 0, own.out);
    assert.ok(!own.out.includes(password), 'the password is never printed');
    assert.match(own.out, /set MQTT_PASSWORD=\(not shown\)/);
    const ownEnv = read(s, 'etc/ripwerk/agent.env');
    assert.match(ownEnv, /^MQTT_USERNAME=keller$/m);
    assert.equal(ownEnv.match(/^MQTT_PASSWORD=.*$/gm)?.join(), `MQTT_PASSWORD=${password}`);
  });

  it('installs only the coordinator: no tools, no cdrom group; builds a checkout without dist/', () => {
    const s = sandbox('coordinator', { built: false });
    const r = run(s, ['--coordinator']);
    assert.equal(r.status, 0, r.out);
    assert.deepEqual(r.calls.filter((c) => c.startsWith('apt-get install')), ['apt-get install -y -qq --no-install-recommends ca-certificates']);
    assert.ok(!r.calls.some((c) => c.startsWith('usermod')), r.calls.join('\n'));
    assert.deepEqual(r.calls.filter((c) => c.startsWith('npm')), [
      `npm ci --no-audit --no-fund @ ${s.src}`,
      `npm run build @ ${s.src}`,
      `npm ci --omit=dev --no-audit --no-fund @ ${path.join(s.root, 'opt/ripwerk')}`,
    ]);
    assert.equal(read(s, 'opt/ripwerk/dist/coordinator/cli.js'), 'built\n');
    assert.ok(r.calls.includes('systemctl enable --now ripwerk-coordinator.service'));
    assert.equal(read(s, 'etc/systemd/system/ripwerk-coordinator.service'), expectedUnit('ripwerk-coordinator.service', s.node));
    assert.equal(read(s, 'etc/ripwerk/coordinator.env'), EXAMPLE);
    assert.ok(!fs.existsSync(path.join(s.root, 'etc/systemd/system/ripwerk.service')));
    assert.deepEqual(changing(run(s, ['--coordinator']).calls), []);
  });

  it('without a running systemd it enables the unit for the next boot', () => {
    const s = sandbox('offline', { booted: false });
    const r = run(s, ['--coordinator']);
    assert.equal(r.status, 0, r.out);
    assert.deepEqual(changing(r.calls).filter((c) => c.startsWith('systemctl')), ['systemctl enable ripwerk-coordinator.service']);
    assert.match(r.out, /it starts at the next boot/);
    assert.match(run(s, ['--coordinator']).out, /Nothing changed: Ripwerk \(coordinator\) is installed and ripwerk-coordinator\.service is enabled\./);
  });

  describe('Node.js older than 20.19', () => {
    function oldNode(name: string, state: Record<string, string>): Sandbox {
      const s = sandbox(name);
      const node = path.join(s.dir, 'oldnode', 'node');
      fs.mkdirSync(path.dirname(node));
      fs.symlinkSync(path.join(s.dir, 'fake.sh'), node);
      for (const [f, text] of Object.entries({ 'node-version': 'v18.19.0\n', ...state })) fs.writeFileSync(path.join(s.state, f), text);
      s.env.NODE = node;
      s.node = node;
      return s;
    }

    it('installs Debian\'s nodejs when it is new enough, and says so', () => {
      const s = oldNode('node-apt', { 'apt-candidate': '20.19.2+dfsg-1', 'node-after-apt': 'v20.19.2\n' });
      const r = run(s, ['--coordinator']);
      assert.equal(r.status, 0, r.out);
      assert.ok(r.calls.includes('apt-get install -y -qq --no-install-recommends nodejs'), r.calls.join('\n'));
      assert.equal(r.calls.filter((c) => c === 'apt-get update -qq').length, 1);
      assert.match(r.out, /installed Debian package nodejs 20\.19\.2\+dfsg-1 \(the system's Node\.js was missing or older than 20\.19\)/);
      assert.match(read(s, 'etc/systemd/system/ripwerk-coordinator.service'), new RegExp(`^ExecStart=${s.node.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} --max-semi-space-size=2 /opt/ripwerk/dist/coordinator/cli.js$`, 'm'));
    });

    function tarball(s: Sandbox, sums: (hash: string) => string) {
      const dist = path.join(s.dir, 'node-dist', 'node-v20.20.2-linux-x64', 'bin');
      fs.mkdirSync(dist, { recursive: true });
      fs.writeFileSync(path.join(dist, 'node'), '#!/bin/sh\necho v20.20.2\n', { mode: 0o755 });
      const tgz = path.join(s.state, 'tarball');
      assert.equal(spawnSync('tar', ['-czf', tgz, '-C', path.join(s.dir, 'node-dist'), 'node-v20.20.2-linux-x64']).status, 0);
      const hash = createHash('sha256').update(fs.readFileSync(tgz)).digest('hex');
      fs.writeFileSync(path.join(s.state, 'shasums'), sums(hash));
      s.env.NODE_DIST_URL = 'https://nodejs.example/dist/v20.20.2/node-v20.20.2-linux-x64.tar.gz';
    }

    it('fetches the official build, checks its SHA-256 and runs the unit on it when Debian\'s is too old', () => {
      const s = oldNode('node-tarball', { 'apt-candidate': '18.19.0+dfsg-6~deb12u2' });
      tarball(s, (hash) => `0000  node-v20.20.2-linux-arm64.tar.gz\n${hash}  node-v20.20.2-linux-x64.tar.gz\n`);
      const r = run(s, ['--coordinator']);
      assert.equal(r.status, 0, r.out);
      assert.ok(!r.calls.some((c) => /^apt-get install .*nodejs/.test(c)), 'Debian\'s 18 is not installed');
      assert.ok(r.calls.some((c) => c.startsWith('curl ') && c.endsWith(' https://nodejs.example/dist/v20.20.2/SHASUMS256.txt')), r.calls.join('\n'));
      assert.match(r.out, /installed Node\.js 20\.20\.2 from https:\/\/nodejs\.example\/\S+ \(checksum checked\) into \/opt\/ripwerk\/node/);
      assert.equal(read(s, 'etc/systemd/system/ripwerk-coordinator.service'), expectedUnit('ripwerk-coordinator.service', '/opt/ripwerk/node/bin/node'));
      const again = run(s, ['--coordinator']);
      assert.match(again.out, /Nothing changed/);
      assert.ok(!again.calls.some((c) => c.startsWith('curl')));
    });

    it('refuses a download whose checksum does not match', () => {
      const s = oldNode('node-bad-sum', { 'apt-candidate': '18.19.0+dfsg-6~deb12u2' });
      tarball(s, () => `${'ab'.repeat(32)}  node-v20.20.2-linux-x64.tar.gz\n`);
      const r = run(s, ['--coordinator']);
      assert.equal(r.status, 1, r.out);
      assert.match(r.out, /checksum mismatch for node-v20\.20\.2-linux-x64\.tar\.gz: not installed/);
      assert.ok(!fs.existsSync(path.join(s.root, 'opt/ripwerk/node')));
      assert.ok(!r.calls.some((c) => c.startsWith('systemctl')), 'stops before the service');
    });
  });

  describe('--with-libdvdcss', () => {
    const DEB822 = `Types: deb deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main non-free-firmware
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main non-free-firmware
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: https://repo.jellyfin.org/debian
Suites: bookworm
Components: main
`;

    it('enables contrib in the deb822 sources (Debian\'s stanzas only), preseeds libdvd-pkg and builds libdvdcss; a second run changes nothing', () => {
      const s = sandbox('css-deb822');
      fs.mkdirSync(path.join(s.root, 'etc/apt/sources.list.d'), { recursive: true });
      fs.writeFileSync(path.join(s.root, 'etc/apt/sources.list.d/debian.sources'), DEB822);
      const r = run(s, ['--with-libdvdcss']);
      assert.equal(r.status, 0, r.out);
      assert.equal(
        read(s, 'etc/apt/sources.list.d/debian.sources'),
        DEB822.replace(/^Components: main non-free-firmware$/gm, 'Components: main non-free-firmware contrib'),
        'contrib for Debian and its security archive, the Jellyfin repository untouched',
      );
      assert.match(r.out, /enabled Debian's contrib component in \/etc\/apt\/sources\.list\.d\/debian\.sources/);
      assert.deepEqual(fs.readFileSync(path.join(s.state, 'debconf'), 'utf8').trim().split('\n'), [
        'libdvd-pkg libdvd-pkg/first-install note',
        'libdvd-pkg libdvd-pkg/post-invoke_hook-install boolean true',
        'libdvd-pkg libdvd-pkg/build boolean true',
      ]);
      const order = r.calls.filter((c) => /^(apt-get|debconf-set-selections|dpkg-reconfigure)/.test(c));
      assert.deepEqual(order, [
        'apt-get update -qq',
        `apt-get install -y -qq --no-install-recommends ${TOOLS} ca-certificates`,
        'debconf-set-selections ',
        'apt-get update -qq',
        'apt-get install -y -qq --no-install-recommends libdvd-pkg',
        'dpkg-reconfigure libdvd-pkg',
      ], 'the package list is read again after contrib was added; the questions are answered before the install');
      assert.match(r.out, /installed libdvdcss \(libdvd-pkg built libdvdcss2 on this host/);

      const again = run(s, ['--with-libdvdcss']);
      assert.match(again.out, /libdvdcss is installed \(libdvdcss2\)/);
      assert.match(again.out, /Nothing changed/);
      assert.deepEqual(changing(again.calls), []);
    });

    it('handles the classic sources.list, and stops with a plain reason without a Debian archive', () => {
      const s = sandbox('css-classic');
      fs.mkdirSync(path.join(s.root, 'etc/apt'), { recursive: true });
      const list = [
        '# deb cdrom:[Debian GNU/Linux 12]/ bookworm main',
        'deb http://deb.debian.org/debian bookworm main non-free-firmware',
        'deb-src http://deb.debian.org/debian bookworm main',
        'deb http://security.debian.org/debian-security bookworm-security main contrib',
        'deb https://download.example.com/apt stable main',
        'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://mirror.example.net/debian bookworm-updates main',
        '',
      ].join('\n');
      fs.writeFileSync(path.join(s.root, 'etc/apt/sources.list'), list);
      const r = run(s, ['--with-libdvdcss']);
      assert.equal(r.status, 0, r.out);
      assert.equal(
        read(s, 'etc/apt/sources.list'),
        [
          '# deb cdrom:[Debian GNU/Linux 12]/ bookworm main',
          'deb http://deb.debian.org/debian bookworm main contrib non-free-firmware',
          'deb-src http://deb.debian.org/debian bookworm main contrib',
          'deb http://security.debian.org/debian-security bookworm-security main contrib',
          'deb https://download.example.com/apt stable main',
          'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://mirror.example.net/debian bookworm-updates main contrib',
          '',
        ].join('\n'),
      );
      assert.ok(r.calls.includes('dpkg-reconfigure libdvd-pkg'));

      const none = sandbox('css-none');
      fs.mkdirSync(path.join(none.root, 'etc/apt'), { recursive: true });
      fs.writeFileSync(path.join(none.root, 'etc/apt/sources.list'), 'deb https://download.example.com/apt stable main\n');
      const refused = run(none, ['--with-libdvdcss']);
      assert.equal(refused.status, 1, refused.out);
      assert.match(refused.out, /found no Debian archive \(debian\.org, or signed with debian-archive-keyring\) in \/etc\/apt\/sources\.list\.d\/debian\.sources or \/etc\/apt\/sources\.list; add the component contrib/);
      assert.ok(!refused.calls.some((c) => c.startsWith('dpkg-reconfigure')));
      assert.equal(run(none, ['--coordinator', '--with-libdvdcss']).status, 2, 'a coordinator has no drives');
    });
  });

  describe('--with-makemkv', () => {
    const VERSION = '1.17.8';
    let server: http.Server;
    let downloads = '';
    const requests: string[] = [];
    const tarballs = new Map<string, Buffer>();

    /** A small tarball with MakeMKV's real name and layout; its build only writes below DESTDIR. */
    function tarball(dir: string, name: string, files: Record<string, string>): Buffer {
      for (const [f, text] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(dir, name, f)), { recursive: true });
        fs.writeFileSync(path.join(dir, name, f), text, { mode: f === 'configure' || f.startsWith('bin/') ? 0o755 : 0o644 });
      }
      const tgz = path.join(dir, `${name}.tar.gz`);
      assert.equal(spawnSync('tar', ['-czf', tgz, '-C', dir, name]).status, 0);
      return fs.readFileSync(tgz);
    }

    before(async () => {
      const dir = fs.mkdtempSync(path.join(base, 'makemkv-src-'));
      // configure writes the Makefile, as autoconf's does; the args it got are kept to check --disable-gui.
      tarballs.set(
        `makemkv-oss-${VERSION}.tar.gz`,
        tarball(dir, `makemkv-oss-${VERSION}`, {
          configure: '#!/bin/sh\necho "$*" >configure.args\nprintf \'all:\\n\\techo built >libmakemkv.so.1\\ninstall: all\\n\\tinstall -D -m 0644 libmakemkv.so.1 $(DESTDIR)/usr/lib/libmakemkv.so.1\\n\\tinstall -D -m 0644 configure.args $(DESTDIR)/usr/share/makemkv-oss/configure.args\\n\' >Makefile\n',
        }),
      );
      // The bin Makefile asks for the licence unless tmp/eula_accepted exists, like the real one.
      tarballs.set(
        `makemkv-bin-${VERSION}.tar.gz`,
        tarball(dir, `makemkv-bin-${VERSION}`, {
          Makefile: 'all: tmp/eula_accepted\n\t@echo built\ntmp/eula_accepted:\n\t@echo "Do you accept the EULA? (no terminal)" >&2; exit 3\ninstall: tmp/eula_accepted\n\tinstall -D -m 0755 bin/makemkvcon $(DESTDIR)/usr/bin/makemkvcon\n',
          'bin/makemkvcon': '#!/bin/sh\necho "MakeMKV v1.17.8 linux(x64-release) started"\n',
          'src/eula_en_linux.txt': 'MakeMKV End User License Agreement\n',
        }),
      );
      server = http.createServer((req, res) => {
        requests.push(req.url ?? '');
        const name = (req.url ?? '').replace(/^\/download\//, '');
        if (req.url === '/download/') {
          res.writeHead(200, { 'content-type': 'text/html' });
          res.end(`<h2>MakeMKV 1.17.7 for Windows</h2><p>MakeMKV v${VERSION} for Windows and Mac</p><a href="makemkv-oss-${VERSION}.tar.gz">oss</a>`);
        } else if (tarballs.has(name)) {
          res.writeHead(200, { 'content-type': 'application/gzip' });
          res.end(tarballs.get(name));
        } else {
          res.writeHead(404);
          res.end('not found');
        }
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      downloads = `http://127.0.0.1:${(server.address() as { port: number }).port}/download`;
    });
    after(() => server.close());

    it('builds oss, stops before the bin part without --accept-makemkv-eula, installs it with it; then nothing to do', async () => {
      const s = sandbox('makemkv', { env: { MAKEMKV_DOWNLOAD_BASE: downloads, CURL: '/usr/bin/curl' } });
      requests.length = 0;
      const first = await runAsync(s, ['--with-makemkv']);
      assert.equal(first.status, 1, first.out);
      assert.match(first.out, new RegExp(`stopped before makemkv-bin-${VERSION.replace(/\./g, '\\.')} \\(makemkvcon\\): it is under MakeMKV's own licence`));
      assert.match(first.out, /then run the installer again with the same options plus --accept-makemkv-eula/);
      assert.deepEqual(requests, ['/download/', `/download/makemkv-oss-${VERSION}.tar.gz`, `/download/makemkv-bin-${VERSION}.tar.gz`], 'the newest version is read from the download page');
      assert.ok(first.calls.includes('apt-get install -y -qq --no-install-recommends build-essential pkg-config libc6-dev libssl-dev libexpat1-dev libavcodec-dev libgl1-mesa-dev qtbase5-dev zlib1g-dev'), first.calls.join('\n'));
      assert.equal(read(s, 'usr/lib/libmakemkv.so.1'), 'built\n');
      assert.equal(read(s, 'usr/share/makemkv-oss/configure.args'), '--disable-gui\n');
      assert.ok(!fs.existsSync(path.join(s.root, 'usr/bin/makemkvcon')), 'no makemkvcon without the licence');
      assert.ok(!first.calls.some((c) => c.startsWith('systemctl enable')), 'stops before the service');

      requests.length = 0;
      const accepted = await runAsync(s, ['--with-makemkv', VERSION, '--accept-makemkv-eula']);
      assert.equal(accepted.status, 0, accepted.out);
      assert.deepEqual(requests, [`/download/makemkv-oss-${VERSION}.tar.gz`, `/download/makemkv-bin-${VERSION}.tar.gz`], 'a named version needs no download page');
      assert.match(read(s, 'usr/bin/makemkvcon'), /MakeMKV v1\.17\.8/);
      assert.equal(mode(s, 'usr/bin/makemkvcon'), 0o755);
      assert.equal(read(s, 'opt/ripwerk/makemkv-version'), `${VERSION}\n`);
      assert.match(accepted.out, /installed MakeMKV 1\.17\.8 \(makemkvcon; licence accepted with --accept-makemkv-eula\)/);
      assert.ok(accepted.calls.includes('systemctl enable --now ripwerk.service'));

      requests.length = 0;
      const again = await runAsync(s, ['--with-makemkv', '--accept-makemkv-eula']);
      assert.equal(again.status, 0, again.out);
      assert.match(again.out, /MakeMKV 1\.17\.8 is installed/);
      assert.match(again.out, /Nothing changed/);
      assert.deepEqual(requests, ['/download/'], 'only the page is read to see whether there is a newer one');
    });

    it('refuses a bad version, the licence without MakeMKV, and says when the download fails', async () => {
      const s = sandbox('makemkv-bad', { env: { MAKEMKV_DOWNLOAD_BASE: downloads, CURL: '/usr/bin/curl' } });
      assert.match(run(s, ['--with-makemkv=1.x']).out, /--with-makemkv takes a version such as 1\.17\.8, got "1\.x"/);
      assert.match(run(s, ['--accept-makemkv-eula']).out, /--accept-makemkv-eula goes with --with-makemkv/);
      const missing = await runAsync(s, ['--with-makemkv', '1.0.0', '--accept-makemkv-eula']);
      assert.equal(missing.status, 1);
      assert.match(missing.out, /could not download http:\/\/127\.0\.0\.1:\d+\/download\/makemkv-oss-1\.0\.0\.tar\.gz/);
      assert.ok(!fs.existsSync(path.join(s.root, 'opt/ripwerk/makemkv-version')));
    });
  });

  describe('--with-mounts', () => {
    it('installs the mounts drop-in, drops the paths drop-in it would undo, and keeps it on later runs', () => {
      const s = sandbox('mounts');
      assert.equal(run(s, []).status, 0);
      const envFile = path.join(s.root, 'etc/ripwerk/ripwerk.env');
      fs.writeFileSync(envFile, EXAMPLE.replace('MEDIA_ROOT=/srv/media', 'MEDIA_ROOT=/mnt/nas/media'));
      assert.equal(run(s, []).status, 0);
      const paths = 'etc/systemd/system/ripwerk.service.d/ripwerk-paths.conf';
      assert.ok(fs.existsSync(path.join(s.root, paths)));

      const r = run(s, ['--with-mounts']);
      assert.equal(r.status, 0, r.out);
      const dropin = 'etc/systemd/system/ripwerk.service.d/mounts.conf';
      assert.equal(read(s, dropin), fs.readFileSync(path.join(REPO_DIR, 'systemd', 'ripwerk-mounts.conf'), 'utf8'));
      assert.equal(mode(s, dropin), 0o644);
      assert.ok(!fs.existsSync(path.join(s.root, paths)), 'ReadWritePaths= would give the service its own mount namespace again');
      assert.match(r.out, /installed \/etc\/systemd\/system\/ripwerk\.service\.d\/mounts\.conf \(the service may mount NAS shares/);
      assert.deepEqual(changing(r.calls).filter((c) => c.startsWith('systemctl')), ['systemctl daemon-reload', 'systemctl restart ripwerk.service']);
      assert.ok(r.calls.includes('apt-get install -y -qq --no-install-recommends cifs-utils nfs-common smbclient'), r.calls.join('\n'));
      assert.match(run(s, ['--with-mounts']).out, /Nothing changed/);

      const later = run(s, []);
      assert.match(later.out, /note: \/etc\/systemd\/system\/ripwerk\.service\.d\/mounts\.conf \(from --with-mounts\) stays/);
      assert.deepEqual(changing(later.calls), []);
      assert.ok(fs.existsSync(path.join(s.root, dropin)));

      const coordinator = sandbox('mounts-coordinator');
      assert.equal(run(coordinator, ['--coordinator', '--with-mounts']).status, 0);
      assert.ok(fs.existsSync(path.join(coordinator.root, 'etc/systemd/system/ripwerk-coordinator.service.d/mounts.conf')));
      const agent = run(sandbox('mounts-agent'), ['--agent', '--coordinator-url', 'mqtt://server:1883', '--with-mounts']);
      assert.equal(agent.status, 2);
      assert.match(agent.out, /--with-mounts goes with the host that runs the coordinator/);
    });
  });
});
