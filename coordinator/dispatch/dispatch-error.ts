import { nativeWorkerRefusal } from '../../shared/native-worker.js';
import type { Fleet } from '../workers/fleet.js';
import { HttpError } from '../http/errors.js';

/** A refusal of the dispatcher (worker offline, no answer, wrong state): its message and status reach the client. */
export class DispatchError extends HttpError {
  constructor(message: string, status: number) {
    super(status, message);
  }
}

/** A native worker (no drives, transcode queue only) gets no rip or title scan: the plain reason why, as a 409. */
export function refuseNative(fleet: Fleet, node: string): void {
  const agent = fleet.get(node);
  if (agent?.status?.capabilities?.native) throw new DispatchError(nativeWorkerRefusal(agent.name), 409);
}
