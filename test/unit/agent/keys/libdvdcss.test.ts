import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { findLibdvdcss, libdvdcssFile, libdvdcssInLdconfig } from '../../../../agent/keys/libdvdcss.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-libdvdcss-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

/** `ldconfig -p` of a Debian 12 host with libdvd-pkg's libdvdcss (format as printed by glibc's ldconfig). */
const LDCONFIG_WITH = `1234 libs found in cache \`/etc/ld.so.cache'
\tlibdvdread.so.8 (libc6,x86-64) => /lib/x86_64-linux-gnu/libdvdread.so.8
\tlibdvdnav.so.4 (libc6,x86-64) => /lib/x86_64-linux-gnu/libdvdnav.so.4
\tlibdvdcss.so.2 (libc6,x86-64) => /lib/x86_64-linux-gnu/libdvdcss.so.2
`;

function fakeLdconfig(name: string, output: string, exitCode = 0): string {
  const file = path.join(root, name);
  fs.writeFileSync(path.join(root, `${name}.out`), output);
  fs.writeFileSync(file, `#!/bin/sh\n[ "$1" = -p ] || exit 9\ncat '${root}/${name}.out'\nexit ${exitCode}\n`, { mode: 0o755 });
  return file;
}

describe('libdvdcss probe', () => {
  it('reads libdvdcss.so.2 out of ldconfig -p, and nothing else', () => {
    assert.equal(libdvdcssInLdconfig(LDCONFIG_WITH), '/lib/x86_64-linux-gnu/libdvdcss.so.2');
    assert.equal(libdvdcssInLdconfig(LDCONFIG_WITH.replace(/.*libdvdcss.*\n/, '')), null);
    assert.equal(libdvdcssFile('/lib/x86_64-linux-gnu/libdvdcss.so.2.2.0'), 'libdvdcss.so.2.2.0');
    assert.equal(libdvdcssFile('/opt/weird/name'), 'libdvdcss.so.2');
  });

  it('finds it through the ldconfig cache, resolving the soname to its file', async () => {
    const lib = path.join(root, 'lib');
    fs.mkdirSync(lib);
    fs.writeFileSync(path.join(lib, 'libdvdcss.so.2.2.0'), 'elf');
    fs.symlinkSync('libdvdcss.so.2.2.0', path.join(lib, 'libdvdcss.so.2'));
    const ldconfig = fakeLdconfig('ldconfig-with', LDCONFIG_WITH.replace('/lib/x86_64-linux-gnu/libdvdcss.so.2', path.join(lib, 'libdvdcss.so.2')));
    assert.equal(await findLibdvdcss({ ldconfig: [ldconfig], dirs: [] }), 'libdvdcss.so.2.2.0');
  });

  it('looks in the library folders when ldconfig cannot be run, and answers null when it is nowhere', async () => {
    const lib = path.join(root, 'lib2');
    fs.mkdirSync(lib);
    const missing = [path.join(root, 'no-ldconfig')];
    assert.equal(await findLibdvdcss({ ldconfig: missing, dirs: [lib] }), null);
    fs.writeFileSync(path.join(lib, 'libdvdcss.so.2'), 'elf');
    assert.equal(await findLibdvdcss({ ldconfig: missing, dirs: [path.join(root, 'nowhere'), lib] }), 'libdvdcss.so.2');
    const without = fakeLdconfig('ldconfig-without', LDCONFIG_WITH.replace(/.*libdvdcss.*\n/, ''));
    assert.equal(await findLibdvdcss({ ldconfig: [without], dirs: [path.join(root, 'nowhere')] }), null);
  });
});
