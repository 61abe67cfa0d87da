/**
 * Whether the agent that takes a transcode may split its long titles into chunks for other agents
 * (issue 41; docs/scaling.md, "One title on several agents"). Decided when the transcode is handed
 * out and sent with it (TranscodeArgs.chunking); the agent, which knows each title's length, splits
 * only a title longer than the limit.
 */
import type { ChunkingArgs } from '../../shared/protocol.js';

export interface ChunkingFacts {
  /** Setting chunkMinMinutes: 0 keeps every title whole. */
  chunkMinMinutes: number;
  /** The node the job chose for its transcode (meta.transcode_node), null when any may take it. */
  chosenNode: string | null;
  /** The node that takes the transcode: it leads the chunked titles and encodes chunks too. */
  leadNode: string;
  /**
   * The online agents with an encoder, the lead among them. Every one of them reads the raw data
   * through its path map: the same assumption that lets any of them take a queued transcode.
   */
  encoderNodes: readonly string[];
}

/**
 * The chunking the lead is allowed, or null (every title whole): the setting is 0, the job chose its
 * node (that node keeps the whole title), or no other online agent has an encoder.
 */
export function chunkingFor(facts: ChunkingFacts): ChunkingArgs | null {
  if (!(facts.chunkMinMinutes > 0) || facts.chosenNode) return null;
  const agents = new Set([facts.leadNode, ...facts.encoderNodes]).size;
  if (agents < 2) return null;
  return { min_seconds: Math.round(facts.chunkMinMinutes * 60 * 1000) / 1000, agents };
}
