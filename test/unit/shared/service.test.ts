import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { listenFailure } from '../../../shared/service.js';

const dist = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

describe('runService start-up failures', () => {
  it('says plainly which port is taken, or may not be used, and names the variables', () => {
    assert.match(listenFailure({ code: 'EADDRINUSE', syscall: 'listen', port: 1883 }) ?? '', /^port 1883 is already in use .*MQTT_PORT/);
    assert.match(listenFailure({ code: 'EACCES', syscall: 'listen', port: 80 }) ?? '', /^port 80 may not be used by this user: ports below 1024 need root/);
    assert.match(listenFailure({ code: 'EADDRNOTAVAIL', syscall: 'listen', port: 8080 }) ?? '', /BIND_ADDRESS/);
    assert.equal(listenFailure({ code: 'EADDRINUSE', syscall: 'connect', port: 1883 }), null, 'not a listen');
    assert.equal(listenFailure(new Error('something else')), null);
    assert.equal(listenFailure(null), null);
  });

  it('ends with one plain line and exit code 1 instead of a stack trace when the port is taken', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', () => resolve()));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      const script = `
        import net from 'node:net';
        import { Logger } from ${JSON.stringify(pathToFileURL(path.join(dist, 'shared', 'log.js')).href)};
        import { runService } from ${JSON.stringify(pathToFileURL(path.join(dist, 'shared', 'service.js')).href)};
        await runService(new Logger('coordinator'), () => new Promise((resolve, reject) => {
          const server = net.createServer();
          server.once('error', reject);
          server.listen(${port}, '127.0.0.1', () => resolve({ stop: async () => server.close() }));
        }));
      `;
      const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
      assert.equal(r.status, 1, r.stderr);
      const lines = r.stderr.trimEnd().split('\n');
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0], new RegExp(`ERROR \\[coordinator\\] cannot start: port ${port} is already in use`));
    } finally {
      taken.close();
    }
  });
});
