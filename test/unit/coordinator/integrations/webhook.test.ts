import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { refreshRequest } from '../../../../coordinator/integrations/library-refresh.js';
import { noticeText, webhookKind, webhookRequest, type JobNotice } from '../../../../coordinator/integrations/webhook.js';

const done: JobNotice = { id: 'j1', title: 'Heat', status: 'completed', error: null, output_path: '/media/Filme/Heat (1995)', device: 'wz-sr0', finished_at: '2026-11-23T04:00:00.000Z' };
const failed: JobNotice = { ...done, status: 'failed', error: 'the disc has no title 9', output_path: null };

describe('webhooks', () => {
  it('tells the kind from the URL unless the setting names one', () => {
    assert.equal(webhookKind('https://discord.com/api/webhooks/123/abc', 'auto'), 'discord');
    assert.equal(webhookKind('http://127.0.0.1:5000/api/webhooks/123/abc', 'auto'), 'discord');
    assert.equal(webhookKind('https://hooks.slack.com/services/T1/B2/x3', 'auto'), 'slack');
    assert.equal(webhookKind('https://ntfy.sh/ripwerk', 'auto'), 'ntfy');
    assert.equal(webhookKind('http://nas:8123/api/webhook/ripwerk', 'auto'), 'generic');
    assert.equal(webhookKind('http://nas:8123/api/webhook/ripwerk', 'ntfy'), 'ntfy');
  });

  it('sends Discord {content}, Slack {text}, ntfy plain text with ?title=, generic the job', () => {
    assert.deepEqual(webhookRequest('discord', 'https://discord.com/api/webhooks/1/t', done), {
      url: 'https://discord.com/api/webhooks/1/t', method: 'POST', headers: { 'content-type': 'application/json' },
      body: '{"content":"Ripwerk: \\"Heat\\" is ready in /media/Filme/Heat (1995)"}',
    });
    assert.equal(webhookRequest('slack', 'https://hooks.slack.com/services/a/b/c', failed).body, '{"text":"Ripwerk: \\"Heat\\" failed: the disc has no title 9"}');
    const ntfy = webhookRequest('ntfy', 'https://ntfy.sh/ripwerk?priority=3', done);
    assert.equal(ntfy.url, 'https://ntfy.sh/ripwerk?priority=3&title=Heat');
    assert.equal(ntfy.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(ntfy.body, 'Ripwerk: "Heat" is ready in /media/Filme/Heat (1995)');
    assert.deepEqual(JSON.parse(webhookRequest('generic', 'http://x/hook', failed).body), { event: 'job_end', job: failed });
    assert.equal(noticeText({ ...done, status: 'canceled' }), 'Ripwerk: "Heat" was canceled');
  });
});

describe('media server library refresh', () => {
  it('asks each server the way it takes it, with its key', () => {
    assert.deepEqual(refreshRequest('jellyfin', 'http://nas:8096/', 'abc123', false), { url: 'http://nas:8096/Library/Refresh', method: 'POST', headers: { authorization: 'MediaBrowser Token="abc123"' } });
    assert.deepEqual(refreshRequest('emby', 'http://nas:8096', 'abc123', false), { url: 'http://nas:8096/Library/Refresh', method: 'POST', headers: { 'x-emby-token': 'abc123' } });
    assert.deepEqual(refreshRequest('plex', 'http://nas:32400', 'tok', false), { url: 'http://nas:32400/library/sections/all/refresh', method: 'GET', headers: { 'x-plex-token': 'tok' } });
    const kodi = refreshRequest('kodi', 'http://htpc:8080', 'kodi:secret', true);
    assert.equal(kodi.url, 'http://htpc:8080/jsonrpc');
    assert.equal(kodi.headers.authorization, `Basic ${Buffer.from('kodi:secret').toString('base64')}`);
    assert.deepEqual(JSON.parse(kodi.body ?? ''), { jsonrpc: '2.0', method: 'AudioLibrary.Scan', id: 1 });
    assert.equal(JSON.parse(refreshRequest('kodi', 'http://htpc:8080', '', false).body ?? '').method, 'VideoLibrary.Scan');
    assert.deepEqual(refreshRequest('jellyfin', 'http://nas:8096', '', false).headers, {});
    const inUrl = refreshRequest('kodi', 'http://kodi:ge%40heim@htpc:8080/', '', false);
    assert.equal(inUrl.url, 'http://htpc:8080/jsonrpc', 'fetch takes no URL with credentials');
    assert.equal(inUrl.headers.authorization, `Basic ${Buffer.from('kodi:ge@heim').toString('base64')}`);
    assert.equal(refreshRequest('kodi', 'http://a:b@htpc:8080', 'kodi:secret', false).headers.authorization, `Basic ${Buffer.from('kodi:secret').toString('base64')}`, 'the key wins');
    assert.equal(refreshRequest('jellyfin', 'http://proxy:pw@nas:8096', 'abc123', false).headers.authorization, 'MediaBrowser Token="abc123"');
  });
});
