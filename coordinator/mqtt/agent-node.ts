/** The fixed client id of an agent is this plus its node (agent/mqtt/link.ts). */
export const AGENT_CLIENT_ID_PREFIX = 'ripwerk-agent-';
/** The agent cuts its client id to this many characters: a longer one names its node only in part. */
export const AGENT_CLIENT_ID_MAX = 120;
/** The host part of a node `<WORKER_NAME>@<host>`: one topic level without @ or wildcards. */
const HOST_PART = /^[A-Za-z0-9._-]{1,120}$/;

/** The node a worker credential logs in as, and whether this login binds the credential to it; or why the login is refused. */
export type NodeClaim = { node: string; bind: boolean } | { refused: string };

/**
 * Which node a login with the worker credential `username` acts as, read from its client id
 * `ripwerk-agent-<node>` (the only client id such a credential may use). The node is
 * `<WORKER_NAME>@<host>`:
 *
 * - a user name without @ (`keller`, issued before the worker's host was known) may act as
 *   `keller@<any host>`; the first such login binds the credential to that node (`bound`, stored with
 *   the credential), and from then on only that node is taken until the credential is issued anew.
 *   Before it is bound, it may also act as the bare node `keller` that agents before the update
 *   used (no binding: the updated agent binds at its next login).
 * - a user name with @ (`keller@nas`) is a whole node and acts as exactly that node.
 * - `holder`: the user name of another worker credential that is that node or bound to it; a node
 *   has one credential, so the login is refused.
 */
export function claimAgentNode(username: string, clientId: string, bound: string | null, holder: (node: string) => string | null): NodeClaim {
  const howTo = username.includes('@') ? `ripwerk-agent-${username}` : `ripwerk-agent-${bound ?? `${username}@<host>`}`;
  if (!clientId.startsWith(AGENT_CLIENT_ID_PREFIX)) return { refused: `a worker credential logs in only with its client id ${howTo}` };
  const named = clientId.slice(AGENT_CLIENT_ID_PREFIX.length);
  let node = named;
  if (clientId.length >= AGENT_CLIENT_ID_MAX) {
    // Cut by the agent: the node is the bound one, or the user name itself, if it begins with what the id names.
    const whole = bound ?? username;
    if (!whole.startsWith(named)) return { refused: `the client id ${clientId} is cut at ${AGENT_CLIENT_ID_MAX} characters and names no node the credential ${username} may act as: use a shorter WORKER_NAME` };
    node = whole;
  }
  const legacyBare = node === username && !username.includes('@');
  const fits = username.includes('@') ? node === username : legacyBare || (node.startsWith(`${username}@`) && HOST_PART.test(node.slice(username.length + 1)));
  if (!fits) return { refused: `the credential ${username} may act only as node ${username.includes('@') ? username : (bound ?? `${username}@<host>`)}, not as ${node} (WORKER_NAME must be ${username.split('@')[0]})` };
  if (bound !== null && node !== bound) {
    return { refused: `the credential ${username} is bound to node ${bound} since its first login; a login as ${node} (another host or name) needs the credential issued anew: POST /api/workers/${username.split('@')[0]}/credentials` };
  }
  const other = holder(node);
  if (other !== null && other !== username) return { refused: `node ${node} has its own credential ${other}` };
  return { node, bind: bound === null && !legacyBare };
}
