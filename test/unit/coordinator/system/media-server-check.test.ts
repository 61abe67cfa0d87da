/**
 * Issue 38: the media server address is asked when saved, with the key the library refresh will send.
 * A loopback stand-in answers as Jellyfin (401 for a wrong token), Plex and Kodi do.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { checkRequest, mediaServerRefusal } from '../../../../coordinator/system/media-server-check.js';

describe('the media server on save', () => {
  let server: http.Server;
  let base = '';
  const seen: { url: string; auth: string; method: string }[] = [];
  before(async () => {
    server = http.createServer((req, res) => {
      seen.push({ url: req.url ?? '', auth: String(req.headers.authorization ?? req.headers['x-plex-token'] ?? ''), method: req.method ?? '' });
      if (req.url === '/System/Info') {
        if (req.headers.authorization !== 'MediaBrowser Token="good"') return res.writeHead(401).end();
        return res.writeHead(200, { 'content-type': 'application/json' }).end('{"ServerName":"wohnzimmer"}');
      }
      if (req.url === '/System/Info/Public') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"ProductName":"Jellyfin Server"}');
      if (req.url === '/jsonrpc') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":1,"jsonrpc":"2.0","result":"pong"}');
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  it('takes a Jellyfin that answers with the key, and one without a key on its public information', async () => {
    assert.equal(await mediaServerRefusal('jellyfin', base, 'good'), null);
    assert.equal(await mediaServerRefusal('jellyfin', `${base}/`, ''), null);
    assert.deepEqual(seen.slice(-2).map((s) => s.url), ['/System/Info', '/System/Info/Public']);
  });

  it('refuses a wrong key with the server\'s answer, never naming the key', async () => {
    const r = await mediaServerRefusal('jellyfin', base, 'wrong-key');
    assert.equal(r?.code, 'mediaServerRefused');
    assert.equal(r?.params.answer, '401');
    assert.equal(r?.text, `mediaServerUrl refused: the jellyfin server at ${base}/System/Info answered 401; check the address and the key (mediaServerKey)`);
    assert.ok(!JSON.stringify(r).includes('wrong-key'));
  });

  it('refuses an address where no such server answers (Plex asked on a Jellyfin)', async () => {
    const r = await mediaServerRefusal('plex', base, 'tok');
    assert.equal(r?.code, 'mediaServerRefused');
    assert.equal(r?.params.answer, '404: Not Found');
  });

  it('asks Kodi with a JSON-RPC ping, the user part of the URL as basic auth', async () => {
    assert.equal(await mediaServerRefusal('kodi', base.replace('http://', 'http://kodi:geheim@'), ''), null);
    const last = seen.at(-1)!;
    assert.deepEqual([last.method, last.url, last.auth], ['POST', '/jsonrpc', `Basic ${Buffer.from('kodi:geheim').toString('base64')}`]);
    assert.equal(checkRequest('kodi', 'http://kodi:geheim@htpc:8080', 'user:pw').headers.authorization, `Basic ${Buffer.from('user:pw').toString('base64')}`, 'the key wins over the URL');
  });

  it('refuses an address nobody answers at, with the reason', async () => {
    // A port that was free a moment ago: nothing listens there.
    const gone = http.createServer();
    await new Promise<void>((resolve) => gone.listen(0, '127.0.0.1', resolve));
    const port = (gone.address() as AddressInfo).port;
    await new Promise<void>((resolve) => gone.close(() => resolve()));
    const r = await mediaServerRefusal('jellyfin', `http://127.0.0.1:${port}`, '');
    assert.equal(r?.code, 'mediaServerUnreachable');
    assert.equal(r?.params.reason, 'ECONNREFUSED');
    assert.equal(r?.text, `mediaServerUrl not saved: the jellyfin server at http://127.0.0.1:${port}/System/Info/Public could not be reached (ECONNREFUSED); save again when it runs`);
  });
});
