import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { validate } from 'node-cron';
import {
  agentNode,
  ConfigError,
  DEFAULT_CAPABILITY_PING_SECONDS,
  DEFAULT_MOUNT_GUARD_SCHEDULE,
  DEFAULT_RATE_LIMIT_PER_MINUTE,
  readAgentConfig,
  readCoordinatorConfig,
  readNativeWorkerConfig,
  WORKER_SLOTS,
} from '../../../shared/config.js';

describe('ENCODER_NICE (agent configuration)', () => {
  it('runs the encoder at nice 10 unless told otherwise, 0 to 19 allowed', () => {
    assert.equal(readAgentConfig({ WORKER_NAME: 'w' }).encoderNice, 10);
    assert.equal(readAgentConfig({ WORKER_NAME: 'w', ENCODER_NICE: '0' }).encoderNice, 0);
    assert.equal(readAgentConfig({ WORKER_NAME: 'w', ENCODER_NICE: ' 19 ' }).encoderNice, 19);
  });

  it('refuses anything but a whole number from 0 to 19, saying what it got', () => {
    for (const raw of ['20', '-1', '5.5', 'low']) {
      assert.throws(
        () => readAgentConfig({ WORKER_NAME: 'w', ENCODER_NICE: raw }),
        (err: Error) => err instanceof ConfigError && err.message === `ENCODER_NICE must be a nice value from 0 (normal priority) to 19 (lowest), got "${raw}"`,
      );
    }
  });

  it('is one of the settings a native worker\'s config file may hold', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-config-'));
    try {
      const file = path.join(dir, 'worker.json');
      fs.writeFileSync(file, JSON.stringify({ ENCODER_NICE: '15', WORKER_NAME: 'laptop' }));
      assert.equal(readNativeWorkerConfig({ HOME: dir }, file).encoderNice, 15);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('spec limits kept in the configuration defaults', () => {
  it('limits each client to 600 requests per minute unless RATE_LIMIT_PER_MINUTE says otherwise', () => {
    assert.equal(DEFAULT_RATE_LIMIT_PER_MINUTE, 600);
    assert.equal(readCoordinatorConfig({}).rateLimitPerMinute, 600);
    assert.equal(readCoordinatorConfig({ RATE_LIMIT_PER_MINUTE: '50' }).rateLimitPerMinute, 50);
  });

  it('pings the workers every 5 s unless CAPABILITY_PING_SECONDS says otherwise', () => {
    assert.equal(DEFAULT_CAPABILITY_PING_SECONDS, 5);
    assert.equal(readCoordinatorConfig({}).capabilityPingSeconds, 5);
  });

  it('runs the mount guard every minute unless MOUNT_GUARD_SCHEDULE says otherwise', () => {
    assert.equal(DEFAULT_MOUNT_GUARD_SCHEDULE, '* * * * *');
    assert.ok(validate(DEFAULT_MOUNT_GUARD_SCHEDULE));
    assert.equal(readCoordinatorConfig({}).mountGuardSchedule, '* * * * *');
  });

  it('gives a worker 4 slots', () => {
    assert.equal(WORKER_SLOTS, 4);
    assert.equal(readAgentConfig({ WORKER_NAME: 'w' }).slots, 4);
  });
});

describe('the node of an agent with its own MQTT credentials (issue 38)', () => {
  const host = os.hostname();
  const creds = { MQTT_USERNAME: 'keller', MQTT_PASSWORD: 'pw' };

  it('is <WORKER_NAME>@<host> also with own credentials; WORKER_NAME defaults to the user name before @', () => {
    const config = readAgentConfig(creds);
    assert.equal(config.workerName, 'keller');
    assert.equal(agentNode(config), `keller@${host}`);
    assert.equal(agentNode(readAgentConfig({ ...creds, WORKER_NAME: 'keller' })), `keller@${host}`);
    assert.equal(agentNode(readAgentConfig({ MQTT_USERNAME: `keller@${host}`, MQTT_PASSWORD: 'pw' })), `keller@${host}`, 'a user name that is the node itself');
    assert.equal(agentNode(readAgentConfig({ WORKER_NAME: 'w' })), `w@${host}`);
  });

  it('refuses at the start a WORKER_NAME or a host the credential cannot log in as, with the reason', () => {
    assert.throws(() => readAgentConfig({ ...creds, WORKER_NAME: 'wohnzimmer' }), (err: Error) => err instanceof ConfigError && err.message === 'WORKER_NAME=wohnzimmer does not fit MQTT_USERNAME=keller: the credential logs in only as the worker keller (leave WORKER_NAME unset, or set it to keller)');
    assert.throws(
      () => readAgentConfig({ MQTT_USERNAME: 'keller@other-host', MQTT_PASSWORD: 'pw' }),
      (err: Error) => err instanceof ConfigError && err.message.startsWith(`MQTT_USERNAME=keller@other-host names the node keller@other-host, but this worker's node is keller@${host}`),
    );
  });
});
