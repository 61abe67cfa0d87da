import type { GuardState } from '../../shared/api-types.js';
import { schedule } from 'node-cron';
import type { Logger } from '../../shared/log.js';
import type { MountService } from './mount-service.js';

/** What GET /health/vorraete shows of the guard. */
export type { GuardState };

/** What the guard uses of the mount service (a narrow seam for its unit test). */
export type GuardedMounts = Pick<MountService, 'store' | 'check' | 'repair'>;

export interface GuardTimer {
  stop(): void | Promise<void>;
}

/**
 * Once a minute every saved mount is looked at. A mount that stopped answering is repaired, but only
 * while no job is unfinished (a repair detaches the share under a running rip or encode). Only a
 * change of a mount's reachability is logged, not every round.
 */
export class MountGuard {
  private lastRun: number | null = null;
  private last = { unreachable: [] as string[], repaired: [] as string[], heldBack: null as string | null };
  private readonly reachable = new Map<string, boolean>();
  private running: Promise<void> | null = null;
  private timer: GuardTimer | null = null;

  constructor(
    private readonly mounts: GuardedMounts,
    private readonly unfinishedJobs: () => number,
    private readonly log: Logger,
    private readonly every: (fn: () => void) => GuardTimer,
    private readonly clock: () => number = Date.now,
  ) {}

  /** The guard on a cron schedule (MOUNT_GUARD_SCHEDULE, every minute by default). */
  static onSchedule(mounts: GuardedMounts, unfinishedJobs: () => number, log: Logger, expression: string): MountGuard {
    return new MountGuard(mounts, unfinishedJobs, log, (fn) => schedule(expression, fn, { name: 'mount-guard', noOverlap: true }));
  }

  start(): void {
    this.timer = this.every(() => void this.tick());
  }

  async stop(): Promise<void> {
    await this.timer?.stop();
    this.timer = null;
    await this.running;
  }

  /** One round; concurrent calls share the running round. */
  tick(): Promise<void> {
    this.running ??= this.round().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async round(): Promise<void> {
    const unreachable: string[] = [];
    const repaired: string[] = [];
    let heldBack: string | null = null;
    for (const row of this.mounts.store.all()) {
      const live = await this.mounts.check(row);
      const ok = live.mounted && live.probe?.ok === true;
      this.transition(row.name, ok, ok ? 'reachable again' : `unreachable (${!live.mounted ? 'not mounted' : live.probe && !live.probe.ok ? live.probe.detail : 'no answer'})`);
      if (ok) continue;
      const busy = this.unfinishedJobs();
      if (busy > 0) {
        unreachable.push(row.name);
        heldBack = `${busy} job${busy === 1 ? ' is' : 's are'} unfinished; the guard repairs only when none is`;
        continue;
      }
      try {
        await this.mounts.repair(row.name, { quiet: true });
        repaired.push(row.name);
        this.transition(row.name, true, 'repaired by the mount guard');
      } catch {
        unreachable.push(row.name);
      }
    }
    this.last = { unreachable, repaired, heldBack };
    this.lastRun = this.clock();
  }

  private transition(name: string, ok: boolean, words: string): void {
    const before = this.reachable.get(name);
    this.reachable.set(name, ok);
    // The first look after start is a transition only when the mount is down.
    if (before === ok || (before === undefined && ok)) return;
    if (ok) this.log.info(`mount guard: storage mount ${name} ${words}`);
    else this.log.warn(`mount guard: storage mount ${name} ${words}`);
  }

  state(): GuardState {
    return {
      active: this.timer !== null,
      mounts: this.mounts.store.all().length,
      alter_sekunden: this.lastRun === null ? null : Math.round((this.clock() - this.lastRun) / 1000),
      mit_treffer: this.last.unreachable.length > 0,
      unreachable: this.last.unreachable,
      repaired: this.last.repaired,
      held_back: this.last.heldBack,
    };
  }
}
