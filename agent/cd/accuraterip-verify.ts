import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { runTool } from '../../shared/process.js';
import { AccurateRipChecksum } from './accuraterip-checksum.js';
import { parseAccurateRip, verifyTracks, CONFIDENT_ENTRY, type AccurateRipPressing, type TrackVerdict } from './accuraterip-db.js';
import { accurateRipDisc, type AccurateRipDisc } from './accuraterip-ids.js';
import type { DiscLayout } from './cd-toc.js';
import type { AccurateRipReport } from '../../shared/protocol.js';

/** The database's answer for one disc is a few hundred bytes; more is no AccurateRip answer. */
export const MAX_ACCURATERIP_BYTES = 256 * 1024;
/** How long the database may take to answer. */
export const ACCURATERIP_TIMEOUT_MS = 15_000;
/** The file in the album folder that keeps the verdicts beside the music. */
export const ACCURATERIP_LOG_FILE = 'accuraterip.log';

export interface FlacTools {
  flac: string;
  metaflac: string;
}

export interface RippedTrack {
  /** The track's number on the disc. */
  number: number;
  file: string;
}

export interface VerifyInput {
  layout: DiscLayout;
  tracks: RippedTrack[];
  /** The drive's read offset in samples the rip was corrected by (0 for an image), and whether it was set or assumed. */
  readOffset: { samples: number; source: 'setting' | 'assumed' | 'image' };
  baseUrl: string;
  tools: FlacTools;
  signal: AbortSignal;
}

/**
 * Decodes a FLAC in full (flac checks every frame and the file's MD5 on the way) and returns its
 * AccurateRip checksums. Throws with flac's reason when the file does not decode or holds fewer
 * samples than its header says.
 */
export async function checksumFlac(file: string, place: { index: number; count: number }, tools: FlacTools, signal: AbortSignal): Promise<{ v1: string; v2: string }> {
  const info = await runTool(tools.metaflac, ['--show-total-samples', '--show-channels', '--show-bps', file], { signal, timeoutMs: 60_000, captureStdout: true });
  const [samples, channels, bits] = info.stdout.trim().split('\n').map(Number);
  if (info.exitCode !== 0 || !Number.isInteger(samples) || samples <= 0) throw new Error(`${path.basename(file)} is no readable FLAC (${info.stderr.trim().split('\n').pop() || 'no sample count'})`);
  if (channels !== 2 || bits !== 16) throw new Error(`${path.basename(file)} is not CD audio (${channels} channel(s) of ${bits} bits, a CD has 2 of 16)`);
  const sum = new AccurateRipChecksum({ ...place, samples });
  const child = spawn(tools.flac, ['-d', '-c', '-s', '--force-raw-format', '--endian=little', '--sign=signed', file], { stdio: ['ignore', 'pipe', 'pipe'], signal });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-2000)));
  const exit = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code));
  });
  for await (const chunk of child.stdout) sum.update(chunk as Buffer);
  const code = await exit;
  if (code !== 0) throw new Error(`${path.basename(file)} does not decode: ${stderr.trim().split('\n').pop() || `flac exited with ${code}`}`);
  if (sum.samplesRead !== samples) throw new Error(`${path.basename(file)} decodes to ${sum.samplesRead} samples, its header says ${samples}`);
  return sum.digest();
}

/** The database's pressings of the disc; null when it does not know the disc (404). Throws when it cannot be asked. */
export async function fetchAccurateRip(baseUrl: string, disc: AccurateRipDisc, signal: AbortSignal): Promise<AccurateRipPressing[] | null> {
  const res = await fetch(baseUrl.replace(/\/+$/, '') + disc.path, { redirect: 'error', signal: AbortSignal.any([signal, AbortSignal.timeout(ACCURATERIP_TIMEOUT_MS)]) });
  if (res.status === 404) {
    await res.body?.cancel();
    return null;
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new Error(`the database answered ${res.status}`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body ?? []) {
    size += (chunk as Uint8Array).length;
    if (size > MAX_ACCURATERIP_BYTES) throw new Error(`the answer is larger than ${MAX_ACCURATERIP_BYTES} bytes`);
    chunks.push(Buffer.from(chunk as Uint8Array));
  }
  return parseAccurateRip(Buffer.concat(chunks));
}

/**
 * The rip's verdict: every track's FLAC decoded in full and checksummed, the database asked, each
 * track compared. Decoding failures throw (the rip is broken); a database that cannot be asked
 * gives the status `unavailable` (the rip is not known to be wrong).
 */
export async function verifyAudioCd(input: VerifyInput): Promise<AccurateRipReport> {
  const disc = accurateRipDisc(input.layout);
  if (!disc) throw new Error('the disc has no audio tracks to verify');
  const sums: { number: number; slot: number; v1: string; v2: string }[] = [];
  const count = disc.audioTracks.length;
  const first = [...input.layout.tracks].sort((a, b) => a.number - b.number)[0]?.number ?? 1;
  for (const t of [...input.tracks].sort((a, b) => a.number - b.number)) {
    const index = disc.audioTracks.indexOf(t.number) + 1;
    if (index === 0) throw new Error(`track ${t.number} is no audio track of the disc`);
    const sum = await checksumFlac(t.file, { index, count }, input.tools, input.signal);
    sums.push({ number: t.number, slot: t.number - first + 1, ...sum });
  }
  const id = `${String(count).padStart(3, '0')}-${disc.id1}-${disc.id2}-${disc.freedb}`;
  let pressings: AccurateRipPressing[] | null;
  try {
    pressings = await fetchAccurateRip(input.baseUrl, disc, input.signal);
  } catch (err) {
    if (input.signal.aborted) throw err;
    const why = (err as Error).name === 'TimeoutError' ? 'no answer in time' : (err as Error).message;
    return { disc_id: id, status: 'unavailable', reason: `the AccurateRip database could not be asked: ${why}`, read_offset: input.readOffset.samples, read_offset_source: input.readOffset.source, tracks: sums.map((s) => ({ number: s.number, v1: s.v1, v2: s.v2, status: 'unknown', confidence: null })) };
  }
  const verdicts = pressings ? verifyTracks(sums, pressings) : sums.map((): TrackVerdict => ({ status: 'unknown' }));
  const tracks = sums.map((s, i) => {
    const v = verdicts[i];
    return { number: s.number, v1: s.v1, v2: s.v2, status: v.status, confidence: v.status === 'unknown' ? null : v.confidence };
  });
  const disagrees = tracks.some((t) => t.status === 'inaccurate' && (t.confidence ?? 0) >= CONFIDENT_ENTRY);
  const status = !pressings ? 'not_in_database' : disagrees ? 'inaccurate' : tracks.every((t) => t.status === 'accurate') ? 'accurate' : tracks.some((t) => t.status === 'accurate') ? 'partly_accurate' : 'inaccurate';
  return { disc_id: id, status, reason: null, read_offset: input.readOffset.samples, read_offset_source: input.readOffset.source, tracks };
}

/** The report as lines for the job log and the album's accuraterip.log. */
export function reportLines(report: AccurateRipReport): string[] {
  const offset =
    report.read_offset_source === 'image'
      ? 'read offset: none (an image is the disc as read)'
      : report.read_offset_source === 'assumed'
        ? 'read offset: 0 samples assumed (no offset is set for this drive: tracks may show as not accurate)'
        : `read offset: ${report.read_offset > 0 ? '+' : ''}${report.read_offset} samples`;
  const head = [`AccurateRip disc id ${report.disc_id}`, offset];
  if (report.status === 'unavailable') head.push(report.reason ?? 'the AccurateRip database could not be asked');
  if (report.status === 'not_in_database') head.push('the AccurateRip database does not know this disc');
  const verdicts: Record<AccurateRipReport['tracks'][number]['status'], (t: AccurateRipReport['tracks'][number]) => string> = {
    accurate: (t) => `accurate (confidence ${t.confidence})`,
    inaccurate: (t) => `NOT accurate (the database has another checksum, confidence ${t.confidence})`,
    unknown: () => (report.status === 'unavailable' ? 'not checked' : 'not in the database'),
  };
  return [...head, ...report.tracks.map((t) => `track ${String(t.number).padStart(2, '0')}: v1 ${t.v1} v2 ${t.v2}: ${verdicts[t.status](t)}`)];
}

/** The log's name: accuraterip.log; `accuraterip-disc2.log` for disc 2 of an album of several discs (they share one folder). */
export function reportFileName(disc: number | null): string {
  return disc ? ACCURATERIP_LOG_FILE.replace('.log', `-disc${disc}.log`) : ACCURATERIP_LOG_FILE;
}

/** Writes the log into the album folder (replacing one of an earlier rip of the same disc); returns its path. */
export async function writeReport(dir: string, report: AccurateRipReport, disc: number | null): Promise<string> {
  const name = reportFileName(disc);
  const tmp = path.join(dir, `.${name}.${process.pid}.${Date.now()}`);
  await fs.writeFile(tmp, reportLines(report).join('\n') + '\n', { flag: 'wx' });
  const dest = path.join(dir, name);
  await fs.rename(tmp, dest);
  return dest;
}
