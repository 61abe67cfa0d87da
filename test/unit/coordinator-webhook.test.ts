import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { noticeText, webhookKind, webhookRequest, type JobNotice } from '../../coordinator/webhook.js';

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
