import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { contentTypeRefusal, crossSiteReason, HOST_MEMO_SIZE, hostAllowed, hostCheck, hostOf, quoted, SECURITY_HEADERS } from '../../../../coordinator/http/request-guard.js';
import { ConfigError, defaultAllowedHosts, readCoordinatorConfig } from '../../../../shared/config.js';

const ALLOWED = defaultAllowedHosts('heimserver');

describe('the Host header (DNS rebinding)', () => {
  it('reads the host name without port or brackets', () => {
    assert.equal(hostOf('Heimserver:8080'), 'heimserver');
    assert.equal(hostOf('heimserver.'), 'heimserver');
    assert.equal(hostOf('[::1]:8080'), '::1');
    assert.equal(hostOf('192.168.1.10'), '192.168.1.10');
    assert.equal(hostOf('evil.example:80'), 'evil.example');
    assert.equal(hostOf('a b'), null);
    assert.equal(hostOf('[zz]'), null);
  });

  it('serves localhost, the machine\'s names and any IP address, a port ignored', () => {
    for (const h of ['localhost:8080', 'heimserver', 'heimserver.local', 'HEIMSERVER.fritz.box:8080', '127.0.0.1:8080', '[::1]:8080', '192.168.1.10', '10.0.0.5:80']) {
      assert.equal(hostAllowed(h, ALLOWED), true, h);
    }
  });

  it('refuses a name that is not this machine\'s: what a rebinding page sends', () => {
    for (const h of ['evil.example', 'evil.example:8080', 'heimserver.evil.example', 'localhost.evil.example', 'nas', '']) {
      assert.equal(hostAllowed(h, ALLOWED), false, h);
    }
  });

  it('takes ALLOWED_HOSTS as given, * for any name', () => {
    const names = readCoordinatorConfig({ ALLOWED_HOSTS: 'Ripwerk.Example.org, nas' }).allowedHosts;
    assert.deepEqual(names, ['ripwerk.example.org', 'nas']);
    assert.equal(hostAllowed('ripwerk.example.org:443', names), true);
    assert.equal(hostAllowed('localhost', names), false, 'the list replaces the default');
    assert.equal(hostAllowed('192.168.1.10:8080', names), true);
    assert.equal(hostAllowed('evil.example', ['*']), true);
    assert.throws(() => readCoordinatorConfig({ ALLOWED_HOSTS: 'http://nas:8080' }), ConfigError);
  });

  it('answers a remembered Host header as hostAllowed does, asked again and again, with a bounded memo', () => {
    const list = [...ALLOWED];
    const check = hostCheck(list);
    list.push('evil.example'); // the list is the one at creation
    const headers = ['localhost:8080', 'evil.example', '127.0.0.1:8080', '[::1]:8080', 'nas', '', 'a b', 'HEIMSERVER.fritz.box:8080', undefined];
    for (let round = 0; round < 3; round++) {
      for (const h of headers) assert.equal(check(h), h === undefined ? true : hostAllowed(h, ALLOWED), String(h));
    }
    // Ever new names: still the right answers, also for the first ones once the memo started over.
    for (let i = 0; i < HOST_MEMO_SIZE * 3; i++) assert.equal(check(`n${i}.evil.example`), false);
    for (const h of headers) assert.equal(check(h), h === undefined ? true : hostAllowed(h, ALLOWED), String(h));
  });

  it('defaults to localhost, the host name and its home-network forms', () => {
    assert.deepEqual(defaultAllowedHosts('NAS.fritz.box'), ['localhost', 'nas.fritz.box', 'nas', 'nas.local', 'nas.lan', 'nas.home', 'nas.home.arpa', 'nas.localdomain', 'nas.internal']);
    assert.ok(readCoordinatorConfig({}).allowedHosts.includes('localhost'));
  });
});

describe('cross-site requests', () => {
  it('lets a request without Origin pass (curl, scripts) and one from the own page', () => {
    assert.equal(crossSiteReason({ host: 'heimserver:8080' }), null);
    assert.equal(crossSiteReason({ origin: 'http://heimserver:8080', host: 'heimserver:8080', secFetchSite: 'same-origin' }), null);
    assert.equal(crossSiteReason({ origin: 'https://ripwerk.example.org', host: 'ripwerk.example.org' }), null, 'a proxy passes the host without its port');
    assert.equal(crossSiteReason({ origin: 'http://[::1]:8080', host: '[::1]:8080' }), null);
    assert.equal(crossSiteReason({ host: 'heimserver', secFetchSite: 'none' }), null, 'typed into the address bar');
  });

  it('refuses another origin, the null origin and a cross-site fetch', () => {
    assert.match(crossSiteReason({ origin: 'https://evil.example', host: 'heimserver:8080' }) ?? '', /^refused: the request comes from another origin \(https:\/\/evil\.example\)/);
    assert.match(crossSiteReason({ origin: 'null', host: 'heimserver:8080' }) ?? '', /another origin \(null\)/);
    assert.match(crossSiteReason({ host: 'heimserver:8080', secFetchSite: 'cross-site' }) ?? '', /Sec-Fetch-Site: cross-site/);
    assert.match(crossSiteReason({ origin: 'http://heimserver:9999', host: 'heimserver:8080', secFetchSite: 'same-site' }) ?? '', /same-site/, 'another port of the same host is another site');
    assert.match(crossSiteReason({ origin: 'http://heimserver.evil.example', host: 'heimserver' }) ?? '', /another origin/);
    assert.match(crossSiteReason({ origin: 'not a url\r\nX: y', host: 'heimserver' }) ?? '', /another origin \(not a urlX: y\)/, 'control characters are dropped');
  });
});

describe('body types of state-changing requests', () => {
  it('takes JSON, and no type without a body', () => {
    assert.equal(contentTypeRefusal('/api/jobs', 'application/json', true), null);
    assert.equal(contentTypeRefusal('/api/jobs', 'Application/JSON; charset=utf-8', true), null);
    assert.equal(contentTypeRefusal('/api/jobs/x/cancel', undefined, false), null);
  });

  it('takes the archive itself for the key store, as the UI sends it', () => {
    for (const t of ['application/octet-stream', 'application/zip', 'application/x-zip-compressed']) assert.equal(contentTypeRefusal('/api/system/keystore', t, true), null, t);
    assert.deepEqual(contentTypeRefusal('/api/system/keystore', 'application/json', true)?.status, 415);
    assert.equal(contentTypeRefusal('/api/system/keystore/', 'application/zip', true), null, 'a trailing slash reaches the same route');
  });

  it('refuses what any page can send with 403, other types with 415', () => {
    for (const t of ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const r = contentTypeRefusal('/api/system/keystore', t, true);
      assert.equal(r?.status, 403, t);
      assert.match(r?.reason ?? '', /can be sent by any web page; send the file itself as application\/octet-stream or application\/zip/);
      assert.equal(contentTypeRefusal('/api/jobs/x/retry-rip', t, false)?.status, 403, `${t} even with an empty body`);
    }
    assert.deepEqual(contentTypeRefusal('/api/settings', 'application/xml', true), { status: 415, reason: 'refused: a body of type application/xml is not taken here; send JSON (Content-Type: application/json)' });
    assert.equal(contentTypeRefusal('/api/settings', undefined, true)?.status, 415);
  });
});

describe('security headers and refusal texts', () => {
  it('forbids framing, sniffing, inline scripts and inline styles', () => {
    assert.equal(SECURITY_HEADERS['X-Frame-Options'], 'DENY');
    assert.equal(SECURITY_HEADERS['X-Content-Type-Options'], 'nosniff');
    const csp = SECURITY_HEADERS['Content-Security-Policy'];
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /style-src 'self'(;|$)/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  });

  it('drops control characters and cuts long texts', () => {
    assert.equal(quoted('a\r\nb\u0000c\u007f'), 'abc');
    assert.equal(quoted('x'.repeat(300)).length, 101);
  });
});
