/**
 * Paths as the household reads them (issue 38): relative to the media root ("Filme/Heat (1995)"),
 * not the server's full path that breaks mid-word on a phone. A path outside the media root (a raw
 * folder elsewhere) stays whole. The media root is GET /system/info's "media" disk, read once.
 */
import { useEffect, useState } from 'preact/hooks';
import { get } from './api.js';

const trimSlashes = (p: string): string => p.replace(/\/+$/u, '');

/** `path` below `root` without the root ("" for the root itself); a path outside it unchanged. */
export function relativeToMedia(path: string, root: string | null): string {
  if (!root) return path;
  const r = trimSlashes(root);
  const p = trimSlashes(path);
  if (p === r) return '';
  return p.startsWith(`${r}/`) ? p.slice(r.length + 1) : path;
}

/** What the household typed, as the server's path: a relative path lies below the media root; an absolute one is taken as it is. */
export function absoluteInMedia(typed: string, root: string | null): string {
  const v = typed.trim();
  if (!root || v === '' || v.startsWith('/')) return v;
  return `${trimSlashes(root)}/${v.replace(/^\.\/+/u, '').replace(/\/+$/u, '')}`;
}

let rootOnce: Promise<string | null> | null = null;

/** The media root; null until known (or when the server does not say). */
export function useMediaRoot(): string | null {
  const [root, setRoot] = useState<string | null>(null);
  useEffect(() => {
    let alive = true;
    rootOnce ??= get<{ disks?: { name: string; path: string }[] }>('/system/info')
      .then((info) => info.disks?.find((d) => d.name === 'media')?.path ?? null)
      .catch(() => {
        rootOnce = null;
        return null;
      });
    void rootOnce.then((r) => alive && setRoot(r));
    return () => {
      alive = false;
    };
  }, []);
  return root;
}
