import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import express from 'express';
import { DOWNLOAD_PIECE_BYTES, sendOpenedFile, sparePieceCount } from '../../../../coordinator/http/file-download.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-download-'));
// Sizes that are not whole pieces: the last piece of each is short, and a reused piece holds older bytes.
const files: Record<string, Buffer> = {
  a: randomBytes(DOWNLOAD_PIECE_BYTES * 2 + 12_345),
  b: randomBytes(DOWNLOAD_PIECE_BYTES + 777),
  c: randomBytes(300),
};
for (const [name, bytes] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), bytes);

let server: http.Server;
let base = '';
before(async () => {
  const app = express();
  app.get('/:name', async (req, res, next) => {
    const handle = await fs.promises.open(path.join(dir, String(req.params.name)), 'r');
    try {
      const stat = await handle.stat();
      await sendOpenedFile(req, res, { handle, size: stat.size, mtime: stat.mtime });
    } catch (err) {
      next(err);
    } finally {
      await handle.close();
    }
  });
  server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  fs.rmSync(dir, { recursive: true, force: true });
});

function get(name: string, range?: string): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(`${base}/${name}`, { headers: range ? { Range: range } : {}, agent: false }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts) }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

describe('sendOpenedFile: the pieces reused from one download to the next', () => {
  it('sends each file\'s own bytes, whole and in ranges, with pieces that served other files before', async () => {
    for (let round = 0; round < 3; round++) {
      for (const [name, bytes] of Object.entries(files)) {
        const whole = await get(name);
        assert.equal(whole.status, 200);
        assert.ok(whole.body.equals(bytes), `${name} whole, round ${round}`);
        const from = Math.floor(bytes.length / 3);
        const to = bytes.length - 5;
        const part = await get(name, `bytes=${from}-${to}`);
        assert.equal(part.status, 206);
        assert.ok(part.body.equals(bytes.subarray(from, to + 1)), `${name} ${from}-${to}, round ${round}`);
        const tiny = await get(name, 'bytes=10-109');
        assert.ok(tiny.body.equals(bytes.subarray(10, 110)), `${name} 10-109, round ${round}`);
      }
    }
    // Two full-size pieces came back from the downloads of a; they are kept, no more than a few.
    assert.ok(sparePieceCount() >= 2 && sparePieceCount() <= 4, `spare pieces: ${sparePieceCount()}`);
  });

  it('sends concurrent downloads their own bytes', async () => {
    const all = await Promise.all([get('a'), get('b'), get('a', 'bytes=5-2000000'), get('b'), get('a')]);
    assert.ok(all[0].body.equals(files.a));
    assert.ok(all[1].body.equals(files.b));
    assert.ok(all[2].body.equals(files.a.subarray(5, 2_000_001)));
    assert.ok(all[3].body.equals(files.b));
    assert.ok(all[4].body.equals(files.a));
  });
});
