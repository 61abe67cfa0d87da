/**
 * The worker with the most free encoder slots; between equally free ones the first by name, so a
 * hand-out is the same on every run. Null when no worker has a free slot. Shared by whole transcodes
 * (transcode-queue.ts) and chunks (chunk-board.ts).
 */
export function freestNode(free: ReadonlyMap<string, number>): string | null {
  let best: string | null = null;
  let bestFree = 0;
  for (const [node, n] of free) {
    if (n > bestFree || (n === bestFree && n > 0 && best !== null && node < best)) {
      best = node;
      bestFree = n;
    }
  }
  return best;
}
