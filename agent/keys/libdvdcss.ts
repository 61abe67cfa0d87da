import fs from 'node:fs/promises';
import path from 'node:path';
import { runTool } from '../../shared/process.js';

/** The library libdvdread loads at run time to read CSS-encrypted DVDs (Debian: libdvd-pkg builds it). */
export const LIBDVDCSS = 'libdvdcss.so.2';

/** Where Debian and a self-built libdvdcss put it, when ldconfig's cache cannot be read. */
export const LIBRARY_DIRS = ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib/arm-linux-gnueabihf', '/usr/lib/i386-linux-gnu', '/lib/x86_64-linux-gnu', '/lib/aarch64-linux-gnu', '/usr/local/lib', '/usr/lib64', '/usr/lib', '/lib'];

/** The path of libdvdcss.so.2 in `ldconfig -p` output (`\tlibdvdcss.so.2 (libc6,x86-64) => /lib/…/libdvdcss.so.2`), or null. */
export function libdvdcssInLdconfig(text: string): string | null {
  for (const line of text.split('\n')) {
    const m = /^\s*libdvdcss\.so\.2\s+\(([^)]*)\)\s+=>\s+(\S+)\s*$/.exec(line);
    if (m) return m[2];
  }
  return null;
}

/** The library file the soname leads to (libdvdcss.so.2.2.0 for libdvdcss 1.4.3), else the soname itself. */
export function libdvdcssFile(realFile: string): string {
  const name = path.basename(realFile);
  return /^libdvdcss\.so\.\d+(?:\.\d+)*$/.test(name) ? name : LIBDVDCSS;
}

export interface LibdvdcssProbe {
  ldconfig?: string[];
  dirs?: string[];
}

/**
 * Whether libdvdcss is installed, as the run-time linker finds it: ldconfig's cache first (`ldconfig
 * -p`, from /sbin when it is not on the PATH), else the usual library folders. Returns what the agent
 * reports among its tools: the library's file name (libdvdcss.so.2.2.0), or null when it is absent.
 */
export async function findLibdvdcss(probe: LibdvdcssProbe = {}): Promise<string | null> {
  for (const bin of probe.ldconfig ?? ['ldconfig', '/sbin/ldconfig']) {
    const result = await runTool(bin, ['-p'], { timeoutMs: 5_000, captureStdout: true }).catch(() => null);
    if (!result || result.exitCode !== 0) continue;
    const found = libdvdcssInLdconfig(result.stdout);
    if (found) return libdvdcssFile(await fs.realpath(found).catch(() => found));
    break; // the cache was read and has no libdvdcss: look in the folders only
  }
  for (const dir of probe.dirs ?? LIBRARY_DIRS) {
    const file = path.join(dir, LIBDVDCSS);
    const real = await fs.realpath(file).catch(() => null);
    if (real) return libdvdcssFile(real);
  }
  return null;
}
