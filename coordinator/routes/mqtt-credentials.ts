import { Router } from 'express';
import { MQTT_NODE_RE } from '../../shared/config.js';
import { topicRights } from '../mqtt/topic-rights.js';
import type { AppContext } from '../context.js';
import { HttpError } from '../http/errors.js';
import { COORDINATOR_USERNAME, HOME_ASSISTANT_USERNAME } from '../mqtt/credentials.js';

/**
 * The all-in-one process's own agent holds the only copy of its password, issued at the start: a new
 * one (or none) through the API would lock it out until the next start.
 */
export function refuseLocalAgent(ctx: AppContext, node: string): void {
  if (ctx.credentials.isLocal(node)) throw new HttpError(409, `the worker ${node} is the local agent of this process: its credentials are issued at every start and cannot be replaced or removed through the API`);
}

/**
 * Own MQTT credentials for a worker and for Home Assistant, issued by the embedded broker's
 * coordinator. A worker's user name is its worker name (`keller`: it acts as node `keller@<host>`,
 * bound to the node of its first login) or a whole node (`keller@nas`: that node only); see
 * coordinator/mqtt/agent-node.ts. The password is in this answer only; the coordinator keeps its
 * scrypt hash. Issuing again replaces the password, clears the binding and disconnects whoever used
 * the old one.
 */
export function mqttCredentialsRouter(ctx: AppContext): Router {
  const router = Router();
  const embeddedOnly = (): void => {
    if (!ctx.broker) throw new HttpError(409, 'the coordinator uses an external MQTT broker (MQTT_URL): create the user in that broker (for Mosquitto: mosquitto_passwd and the ACL file of docs/mqtt.md)');
  };
  const haPrefix = (): string => ctx.settings.get('homeAssistantPrefix') || 'homeassistant';

  router.post('/workers/:name/credentials', async (req, res) => {
    embeddedOnly();
    const name = String(req.params.name);
    // A known worker keeps its credential's user name, or gets its node as one (the node, and so its
    // jobs and history, stay); a new one is named by the request.
    const known = ctx.fleet.find(name);
    const username = known ? (ctx.credentials.credentialFor(known.node) ?? known.node) : (ctx.credentials.holderOf(name) ?? name);
    if (!MQTT_NODE_RE.test(username)) throw new HttpError(400, `"${username.slice(0, 100).replace(/[\r\n]/g, ' ')}" is no worker name: use letters, digits, dot, dash, underscore and @ (up to 120 characters)`);
    if (username === COORDINATOR_USERNAME || username === HOME_ASSISTANT_USERNAME) throw new HttpError(400, `"${username}" is reserved for ${username === COORDINATOR_USERNAME ? 'the coordinator' : 'Home Assistant'}`);
    refuseLocalAgent(ctx, username);
    const replaced = ctx.credentials.has(username);
    const password = await ctx.credentials.issue(username, 'agent');
    // Its sessions end, also one acting as the node the credential was bound to (the binding is gone).
    ctx.broker?.disconnect(username);
    const workerName = username.split('@')[0] as string;
    // The node it will act as: itself when it is one, else <name>@<host> (the host of its first login).
    const node = username.includes('@') ? username : known && known.node.startsWith(`${username}@`) ? known.node : `${username}@<host>`;
    ctx.log.info(`MQTT credentials ${replaced ? 'replaced' : 'issued'} for worker ${workerName} (user ${username}, node ${node})`);
    res.status(201).json({
      username,
      password,
      node,
      replaced,
      rights: topicRights({ kind: 'agent', node, legacy: false }, haPrefix()),
      hint: `Set MQTT_USERNAME=${username} and MQTT_PASSWORD=<password> on the worker (native worker: in config/worker.json), leave WORKER_NAME unset or ${workerName}, remove RIPWERK_BROKER_SECRET there and restart it. ${username.includes('@') ? `It logs in as node ${username} only.` : `It becomes node ${workerName}@<its host name>, bound to the host of its first login: on another host, issue the credential anew.`} The password is shown only now.`,
    });
  });

  router.post('/home-assistant/credentials', async (_req, res) => {
    embeddedOnly();
    const replaced = ctx.credentials.has(HOME_ASSISTANT_USERNAME);
    const password = await ctx.credentials.issue(HOME_ASSISTANT_USERNAME, 'home-assistant');
    ctx.broker?.disconnect(HOME_ASSISTANT_USERNAME);
    ctx.log.info(`MQTT credentials ${replaced ? 'replaced' : 'issued'} for Home Assistant`);
    res.status(201).json({
      username: HOME_ASSISTANT_USERNAME,
      password,
      replaced,
      rights: topicRights({ kind: 'home-assistant' }, haPrefix()),
      hint: "Enter this user name and password in Home Assistant's MQTT integration (broker: this host, port MQTT_PORT). The password is shown only now.",
    });
  });

  router.delete('/home-assistant/credentials', (_req, res) => {
    embeddedOnly();
    if (!ctx.credentials.revoke(HOME_ASSISTANT_USERNAME)) throw new HttpError(404, 'Home Assistant has no MQTT credentials');
    ctx.broker?.disconnect(HOME_ASSISTANT_USERNAME);
    res.json({ revoked: HOME_ASSISTANT_USERNAME });
  });

  return router;
}
