import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { get } from './api.js';

export interface Polled<T> {
  data: T | null;
  /** The last fetch failed: what is shown is older (never replaced by an empty list). */
  stale: boolean;
  error: string | null;
  refresh(): void;
}

/**
 * Polls a GET path; a failed or aborted fetch keeps the data already shown and marks it stale.
 * `everyMs` 0 fetches once (a finished job's detail does not change by itself).
 */
export function usePoll<T>(path: string | null, everyMs: number): Polled<T> {
  const [data, setData] = useState<T | null>(null);
  const [stale, setStale] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const seq = useRef(0);
  const shownPath = useRef<string | null>(null);
  const load = useCallback(async () => {
    if (!path) return;
    const mine = ++seq.current;
    try {
      const value = await get<T>(path);
      if (mine !== seq.current) return;
      setData(value);
      setStale(false);
      setError(null);
    } catch (err) {
      if (mine !== seq.current) return;
      setStale(true);
      setError((err as Error).message);
    }
  }, [path]);
  useEffect(() => {
    // A new path starts empty; a new rhythm for the same path (a job that ended) keeps what is shown.
    if (shownPath.current !== path) setData(null);
    shownPath.current = path;
    void load();
    if (!path || everyMs <= 0) return;
    const timer = setInterval(() => void load(), everyMs);
    return () => clearInterval(timer);
  }, [path, everyMs, load]);
  return { data, stale, error, refresh: () => void load() };
}

/** The spec's polling rhythm: jobs and drives every 4 s; hardware, workers and storage every 12 s. */
export const FAST_MS = 4000;
export const SLOW_MS = 12_000;
