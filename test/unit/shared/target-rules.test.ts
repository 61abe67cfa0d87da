import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { checkTarget, forbiddenKind, refusalFor, sendToTarget, TargetRefused, type TargetPolicy } from '../../../shared/target-rules.js';

const OWN = ['127.0.0.1', '::1', '192.168.1.10', 'fe80::1'];
const strict: TargetPolicy = { allowPrivate: false, ownPort: 8080, ownAddresses: OWN };
const lax: TargetPolicy = { ...strict, allowPrivate: true };

describe('webhook targets', () => {
  it('names loopback, link-local, unspecified and multicast addresses, in every spelling', () => {
    for (const a of ['127.0.0.1', '127.5.6.7', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '0:0:0:0:0:0:0:1']) assert.equal(forbiddenKind(a), 'a loopback address', a);
    for (const a of ['169.254.169.254', 'fe80::1', 'FE80::abcd%eth0', '::ffff:169.254.169.254']) assert.equal(forbiddenKind(a), 'a link-local address', a);
    for (const a of ['0.0.0.0', '::']) assert.equal(forbiddenKind(a), 'an unspecified address', a);
    assert.equal(forbiddenKind('224.0.0.1'), 'a multicast or broadcast address');
    assert.equal(forbiddenKind('255.255.255.255'), 'a multicast or broadcast address');
    assert.equal(forbiddenKind('ff02::1'), 'a multicast address');
  });

  it('lets LAN and internet addresses through: ntfy on the LAN is a household\'s normal case', () => {
    for (const a of ['192.168.1.20', '10.0.0.3', '172.16.5.5', '93.184.216.34', '2001:db8::5', 'fd00::7']) assert.equal(refusalFor(a, 80, strict), null, a);
  });

  it('refuses this machine\'s addresses, and its own API even with allowPrivateWebhooks', () => {
    assert.match(refusalFor('192.168.1.10', 2586, strict) ?? '', /an address of this machine \(192\.168\.1\.10\); turn on the setting allowPrivateWebhooks/);
    assert.equal(refusalFor('192.168.1.10', 2586, lax), null);
    assert.equal(refusalFor('127.0.0.1', 2586, lax), null);
    assert.equal(refusalFor('169.254.169.254', 80, lax), null);
    for (const a of ['127.0.0.1', '192.168.1.10', '::1', '0.0.0.0']) assert.match(refusalFor(a, 8080, lax) ?? '', /this Ripwerk itself/, a);
    assert.match(refusalFor('224.0.0.1', 80, lax) ?? '', /multicast/, 'multicast is never a webhook');
  });

  it('resolves a name and refuses it when it points at loopback', async () => {
    const lookup = (async (host: string) => (host === 'sneaky.example' ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '203.0.113.5', family: 4 }])) as unknown as Parameters<typeof checkTarget>[2];
    assert.match((await checkTarget('http://sneaky.example/hook', strict, lookup)) ?? '', /loopback address \(127\.0\.0\.1\)/);
    assert.equal(await checkTarget('https://ntfy.example/ripwerk', strict, lookup), null);
    assert.match((await checkTarget('http://[::1]:9000/x', strict, lookup)) ?? '', /loopback/);
    assert.match((await checkTarget('http://169.254.169.254/latest/meta-data', strict, lookup)) ?? '', /link-local/);
    assert.match((await checkTarget('http://localhost:8080/api/jobs', lax)) ?? '', /this Ripwerk itself/, 'the real resolver: localhost is loopback');
  });
});

describe('sending to a target', () => {
  let server: http.Server;
  let port = 0;
  const hits: string[] = [];
  before(async () => {
    server = http.createServer((req, res) => {
      hits.push(`${req.method} ${req.url}`);
      if (req.url === '/moved') {
        res.writeHead(302, { location: '/elsewhere' });
        res.end();
        return;
      }
      res.writeHead(204);
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => server.close());

  it('refuses loopback before connecting, also behind the name localhost', async () => {
    await assert.rejects(sendToTarget({ url: `http://127.0.0.1:${port}/hook`, method: 'POST', headers: {}, body: 'x', timeoutMs: 2000 }, strict), TargetRefused);
    await assert.rejects(sendToTarget({ url: `http://localhost:${port}/hook`, method: 'POST', headers: {}, body: 'x', timeoutMs: 2000 }, strict), (err: Error) => err instanceof TargetRefused && /loopback/.test(err.message));
    assert.deepEqual(hits, [], 'nothing reached the target');
  });

  it('delivers with allowPrivateWebhooks and does not follow a redirect', async () => {
    assert.equal(await sendToTarget({ url: `http://localhost:${port}/hook`, method: 'POST', headers: {}, body: 'x', timeoutMs: 2000 }, { ...lax, ownPort: 1 }), 204);
    assert.equal(await sendToTarget({ url: `http://127.0.0.1:${port}/moved`, method: 'POST', headers: {}, body: 'x', timeoutMs: 2000 }, { ...lax, ownPort: 1 }), 302);
    assert.deepEqual(hits, ['POST /hook', 'POST /moved']);
  });

  it('checks every send again: a kept-alive connection of a send allowed a moment ago does not carry one the rules now refuse', async () => {
    hits.length = 0;
    assert.equal(await sendToTarget({ url: `http://localhost:${port}/hook`, method: 'POST', headers: {}, body: 'x', timeoutMs: 2000 }, { ...lax, ownPort: 1 }), 204);
    await assert.rejects(sendToTarget({ url: `http://localhost:${port}/hook`, method: 'POST', headers: {}, body: 'x', timeoutMs: 2000 }, strict), TargetRefused);
    assert.deepEqual(hits, ['POST /hook']);
  });
});
