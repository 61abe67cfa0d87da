import { topics } from '../../shared/protocol.js';
import type { AppContext } from '../context.js';

/**
 * Forgets a worker's node: its retained drive states and status are cleared (they would bring it
 * back to the list at the next start), its record and drives removed (its name is free again), and
 * the work it held ends as for a removed worker (Dispatcher.workerRemoved).
 */
export function forgetNode(ctx: Pick<AppContext, 'fleet' | 'dispatcher'>, node: string): void {
  if (ctx.fleet.get(node)) {
    for (const d of ctx.fleet.devices()) if (d.state.node === node) ctx.dispatcher.publishRaw(topics.driveState(node, d.state.drive), '', true);
    ctx.dispatcher.publishRaw(topics.agentStatus(node), '', true);
    ctx.fleet.remove(node);
  }
  ctx.dispatcher.workerRemoved(node);
}

/**
 * A worker credential issued as `keller` whose agent, before the update, used the bare node
 * `keller`: updated, the agent is `keller@<host>`, and the credential is bound to that node at its
 * first login (coordinator/mqtt/agent-node.ts). The bare node is then forgotten, so the worker is
 * listed once, under its new node, and keeps its name `keller` (the name of a removed node is free).
 * Returns whether there was such a node.
 */
export function retireBareNode(ctx: Pick<AppContext, 'fleet' | 'dispatcher' | 'log'>, username: string, node: string): boolean {
  if (username.includes('@') || node === username || !ctx.fleet.get(username)) return false;
  forgetNode(ctx, username);
  ctx.log.info(`worker ${username} is now node ${node} (its credential's first login as <WORKER_NAME>@<host>): the node ${username} its agent used before the update is removed with its drives, and the work it still held ends`);
  return true;
}
