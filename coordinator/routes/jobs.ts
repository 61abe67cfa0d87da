import fs from 'node:fs';
import path from 'node:path';
import { Router, type Request } from 'express';
import type { JobDetail } from '../../shared/api-types.js';
import { toCsv } from '../http/csv.js';
import { parseLanguageList } from '../../shared/languages.js';
import { checkMediaPath, realPathWithin } from '../../shared/media-paths.js';
import { isTranscodeInput } from '../../shared/raw-media.js';
import { keyMatches } from '../../shared/disc-key.js';
import type { AppContext } from '../context.js';
import { sendOpenedFile } from '../http/file-download.js';
import { listOutputFiles, openJobFile } from '../jobs/job-file.js';
import { HttpError, objectBody } from '../http/errors.js';
import { createRipJob, ripLengthRefusal } from '../discs/rip-jobs.js';
import { outputTarget, phaseStart, toView, type JobRow } from '../jobs/jobs-store.js';
import { apiStatus, isActive, isRetryable } from '../jobs/job-status.js';
import { carefulRetry } from '../jobs/careful-retry.js';

function optionalString(body: Record<string, unknown>, key: string): string | null {
  const v = body[key];
  if (v === undefined || v === null || v === '') return null;
  if (typeof v !== 'string') throw new HttpError(400, `${key} must be a string`);
  return v.trim() || null;
}

function optionalInt(body: Record<string, unknown>, key: string, min: number, max: number): number | null {
  const v = body[key];
  if (v === undefined || v === null || v === '') return null;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw new HttpError(400, `${key} must be a whole number from ${min} to ${max}`);
  return v;
}

/** audio_languages / subtitle_languages: a list of ISO 639-2 codes, or null when the request leaves it to the settings. */
function languagesOf(body: Record<string, unknown>, key: 'audio_languages' | 'subtitle_languages'): string[] | null {
  const v = body[key];
  if (v === undefined || v === null) return null;
  const list = parseLanguageList(v, key);
  if (!list.ok) throw new HttpError(400, list.reason);
  return list.codes;
}

function titlesOf(body: Record<string, unknown>): number[] {
  const v = body.titles;
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || !v.every((n) => typeof n === 'number' && Number.isInteger(n) && n >= 0 && n < 1000)) throw new HttpError(400, 'titles must be an array of title numbers (whole numbers from 0)');
  return [...new Set(v as number[])];
}

/**
 * The fields POST /jobs knows; any other is refused, so a misspelt field is not silently ignored.
 * audio_languages and subtitle_languages are the language choice, musicbrainz_release_id an audio CD's release.
 */
export const JOB_FIELDS: readonly string[] = [
  'device', 'title', 'year', 'series', 'season', 'titles', 'main_feature_only', 'target_dir', 'work_dir', 'transcode_node', 'tmdb_id',
  'audio_languages', 'subtitle_languages', 'musicbrainz_release_id',
];

/** /jobs: the job list, creation, files, cancel and retries, raw data and the CSV export. */
export function jobsRouter(ctx: AppContext): Router {
  const router = Router();
  const { jobs, config, dispatcher, fleet, answers } = ctx;

  const job = (req: Request): JobRow => {
    const row = jobs.get(String(req.params.id));
    if (!row) throw new HttpError(404, `no job with id ${String(req.params.id)}`, 'jobNotFound', { id: String(req.params.id).slice(0, 100) });
    return row;
  };

  router.get('/jobs', (_req, res) => {
    // The cached pieces go out as they are: joining them would copy the whole body (8 MB for 10,000
    // jobs) on every request.
    const parts = jobs.listParts();
    answers.track(res);
    res.type('application/json');
    res.setHeader('Content-Length', parts.reduce((n, p) => n + p.length, 0));
    res.cork();
    for (const p of parts) res.write(p);
    res.uncork();
    res.end();
  });

  router.get('/jobs/export', (_req, res) => {
    const header = ['id', 'title', 'status', 'progress', 'device', 'node', 'transcode_node', 'target_dir', 'output_path', 'error', 'created_at', 'finished_at'];
    const now = Date.now();
    const rows = jobs.all().map((r) => {
      const v = toView(r, now);
      return [v.id, v.title, v.status, Math.round(v.progress * 100) / 100, v.device, v.node, v.transcode_node, v.target_dir, v.output_path, v.error, v.created_at, v.finished_at];
    });
    res.type('text/csv; charset=utf-8').attachment('ripwerk-jobs.csv').send(toCsv(header, rows));
  });

  router.post('/jobs', async (req, res) => {
    const body = objectBody(req);
    const unknown = Object.keys(body).filter((k) => !JOB_FIELDS.includes(k));
    if (unknown.length) throw new HttpError(400, `unknown field${unknown.length > 1 ? 's' : ''} ${unknown.slice(0, 5).map((k) => `"${k.slice(0, 60)}"`).join(', ')}: POST /jobs takes ${JOB_FIELDS.join(', ')}`);
    const device = optionalString(body, 'device');
    if (!device) throw new HttpError(400, 'device is required (a name from GET /devices)');
    const series = optionalString(body, 'series');
    const season = optionalInt(body, 'season', 0, 999);
    if ((series === null) !== (season === null)) throw new HttpError(400, 'series and season go together: give both or neither');
    const mainOverride = body.main_feature_only;
    if (mainOverride !== undefined && mainOverride !== null && typeof mainOverride !== 'boolean') throw new HttpError(400, 'main_feature_only must be true or false');
    const audioLanguages = languagesOf(body, 'audio_languages');
    const subtitleLanguages = languagesOf(body, 'subtitle_languages');
    const title = optionalString(body, 'title');
    const targetDir = optionalString(body, 'target_dir');
    const workDir = optionalString(body, 'work_dir');
    // Before the drive is looked for: a field no worker would take is the request's fault, whatever the drive.
    const tooLong = ripLengthRefusal({ title, series, targetDir, workDir });
    if (tooLong) throw new HttpError(400, tooLong);
    const row = await createRipJob(ctx, {
      device,
      title,
      year: optionalInt(body, 'year', 1880, 2200),
      series,
      season,
      titles: titlesOf(body),
      mainFeatureOnly: typeof mainOverride === 'boolean' ? mainOverride : null,
      targetDir,
      workDir,
      transcodeNode: optionalString(body, 'transcode_node'),
      tmdbId: optionalInt(body, 'tmdb_id', 1, Number.MAX_SAFE_INTEGER),
      audioLanguages,
      subtitleLanguages,
      musicbrainzReleaseId: optionalString(body, 'musicbrainz_release_id'),
      origin: 'POST /jobs',
    });
    res.status(201).json(toView(row, Date.now()));
  });

  router.get('/jobs/:id', (req, res) => {
    res.json(toView(job(req), Date.now()));
  });

  router.get('/jobs/:id/detail', (req, res) => {
    const row = job(req);
    const device = row.device ? fleet.device(row.device) : undefined;
    const meta = row.meta;
    const detail: JobDetail = {
      ...toView(row, Date.now()),
      disc: device?.state.disc && keyMatches(meta?.fingerprint, device.state.disc) ? device.state.disc : null,
      raw: { state: row.raw_state ?? 'unclear', path: row.raw_path, size_bytes: row.raw_size, checked_at: row.raw_checked_at },
      audio_languages: meta?.audio_languages ?? null,
      subtitle_languages: meta?.subtitle_languages ?? null,
      streams: meta?.streams ?? [],
      logs: jobs.logs(row.id),
    };
    res.json(detail);
  });

  /** The real path of the job's output folder: under the real MEDIA_ROOT, or a 403 (a symlink to /etc is no output folder). */
  const outputDir = async (row: JobRow): Promise<string> => {
    if (!row.output_path) throw new HttpError(404, 'the job has no output yet');
    const check = checkMediaPath(config.mediaRoot, row.output_path);
    if (!check.ok) throw new HttpError(403, `the output path is outside ${config.mediaRoot}: ${check.reason}`);
    const found = await realPathWithin([config.mediaRoot], check.path);
    if (found.kind === 'missing') throw new HttpError(404, `the output folder ${check.path} is gone`);
    if (found.kind === 'outside') throw new HttpError(403, `the output folder ${check.path} leads outside ${config.mediaRoot} through a symbolic link: refused`);
    return found.path;
  };

  /**
   * The job's raw folder for deletion or a new transcode: a real folder (not a symbolic link) named like
   * the job, whose real path lies under RAW_DIR or MEDIA_ROOT (where work folders are); else a 403.
   */
  const checkRawFolder = async (row: JobRow, dir: string): Promise<void> => {
    const st = await fs.promises.lstat(dir).catch(() => null);
    if (st?.isSymbolicLink()) throw new HttpError(403, `the raw folder ${dir} is a symbolic link: refused`);
    const found = await realPathWithin([config.rawDir, config.mediaRoot], dir);
    if (found.kind === 'missing' || !st?.isDirectory()) throw new HttpError(409, `the raw folder ${dir} is gone`);
    if (found.kind === 'outside' || path.basename(found.path) !== row.id) throw new HttpError(403, `the raw folder ${dir} lies outside ${config.rawDir} and ${config.mediaRoot}: refused`);
  };

  router.get('/jobs/:id/files', async (req, res) => {
    // The spec's listing is the output folder's own files by bare name; the folders below on request.
    const subfolders = req.query.subfolders === 'true' || req.query.subfolders === '1';
    res.json(await listOutputFiles(await outputDir(job(req)), subfolders));
  });

  router.get('/jobs/:id/files/:name', async (req, res) => {
    const name = String(req.params.name);
    const folder = req.query.folder ?? '';
    if (typeof folder !== 'string') throw new HttpError(400, 'folder must be given once, as text');
    const file = await openJobFile(config.mediaRoot, job(req).output_path, name, folder);
    try {
      res.type(path.extname(name) || 'application/octet-stream');
      res.setHeader('Content-Disposition', `attachment; filename*=UTF-8''${encodeURIComponent(name)}`);
      res.setHeader('Cache-Control', 'public, max-age=0');
      await sendOpenedFile(req, res, file);
    } finally {
      await file.close();
    }
  });

  router.post('/jobs/:id/cancel', (req, res) => {
    const row = job(req);
    // The dispatcher's own refusal in the same words, here with its code for the UI and Accept-Language.
    if (!isActive(row.status)) throw new HttpError(409, `the job is ${apiStatus(row.status)}; only pending, processing or transcoding jobs can be canceled`, 'cancelNotActive', { status: apiStatus(row.status) });
    res.json(toView(dispatcher.cancel(row), Date.now()));
  });

  router.post('/jobs/:id/retry-transcode', async (req, res) => {
    const row = job(req);
    if (!isRetryable(row.status)) throw new HttpError(409, `only a failed or canceled job can be transcoded again (this one is ${apiStatus(row.status)})`, 'retryTranscodeNotRetryable', { status: apiStatus(row.status) });
    const finding = await ctx.raw.locate(row);
    if (finding.state !== 'present' || !finding.path) throw new HttpError(409, 'no raw data of this job was found: retry the rip instead', 'retryNoRawData');
    const rawDir = finding.path;
    await checkRawFolder(row, rawDir);
    const files = (await fs.promises.readdir(rawDir)).filter((n) => isTranscodeInput(n) && !n.startsWith('.')).sort().map((n) => path.join(rawDir, n));
    if (files.length === 0) throw new HttpError(409, `the raw folder ${rawDir} holds no video files: retry the rip instead`, 'retryRawEmpty', { dir: rawDir });
    // The job's new phase and its queue entry in one commit: never one without the other. One write of
    // the job: its status, the phase, and the rip marked finished in the meta as it is now (the probe took a while).
    jobs.inTransaction(() => {
      // The new transcode's time and output are measured anew (an undefined key leaves the meta).
      const moved = jobs.move(row.id, 'transcoding', { ...phaseStart('transcode'), error: null, finished_at: null, output_path: null }, { rip_fertig: true, transcode_started_at: undefined, transcode_seconds: undefined, output_bytes: undefined });
      if (!moved) throw new HttpError(409, 'the job changed meanwhile (a second retry?): it is not transcoded again');
      dispatcher.enqueueTranscode(row.id, rawDir, files);
    });
    res.status(202).json(toView(jobs.get(row.id) as JobRow, Date.now()));
  });

  router.post('/jobs/:id/retry-rip', async (req, res) => {
    const row = job(req);
    const careful = carefulRetry(req.body, row.meta?.disc_type);
    if (!isRetryable(row.status)) throw new HttpError(409, `only a failed or canceled job can be ripped again (this one is ${apiStatus(row.status)})`, 'retryRipNotRetryable', { status: apiStatus(row.status) });
    const device = row.device ? fleet.device(row.device) : undefined;
    if (!device) throw new HttpError(409, `the drive ${row.device ?? '?'} of this job is not known any more`, 'retryDriveUnknown', { drive: row.device ?? '?' });
    const meta = row.meta ?? {};
    const disc = device.state.disc;
    if (!disc) throw new HttpError(409, `there is no disc in ${device.name}: insert the disc of this job and try again`, 'retryNoDisc', { drive: device.name });
    // The job's key is the disc's identity, or (a job made before content ids) its label fingerprint.
    if (meta.fingerprint !== undefined && !keyMatches(meta.fingerprint, disc)) {
      throw new HttpError(409, `the disc in ${device.name} ("${disc.title}") is not the disc of this job: insert that disc and try again`, 'retryWrongDisc', { drive: device.name, disc: disc.title });
    }
    // What the earlier rip recorded of itself (its files, times, sizes, read errors) and how it read are the old job's, not the new one's.
    const { rip_fertig: _done, raw_files: _files, rip_started_at: _ripAt, rip_seconds: _ripS, transcode_started_at: _tcAt, transcode_seconds: _tcS, raw_bytes: _raw, output_bytes: _out, read_errors: _errors, careful: _careful, ...kept } = meta;
    const target = outputTarget(row);
    const created = await createRipJob(ctx, {
      device: device.name,
      title: row.title,
      year: target.year,
      series: target.series,
      season: target.season,
      titles: meta.titles ?? [],
      mainFeatureOnly: meta.main_feature_only ?? null,
      targetDir: row.target_dir,
      workDir: meta.work_dir ?? null,
      transcodeNode: meta.transcode_node ?? null,
      audioLanguages: meta.audio_languages ?? null,
      subtitleLanguages: meta.subtitle_languages ?? null,
      album: meta.album ?? null,
      origin: careful ? `careful retry of the rip of job ${row.id}` : `retry of the rip of job ${row.id}`,
      meta: { ...kept, retry_of: row.id, ...(careful ? { careful: true } : {}) },
      careful,
    });
    res.status(201).json(toView(created, Date.now()));
  });

  router.get('/jobs/:id/rohdaten', async (req, res) => {
    const row = job(req);
    const finding = await ctx.raw.refresh(row);
    res.json({ job_id: row.id, ...finding, can_retry: finding.state === 'present' });
  });

  router.delete('/jobs/:id', async (req, res) => {
    const row = job(req);
    const withRaw = req.query.rohdaten === 'true' || req.query.rohdaten === '1';
    if (isActive(row.status)) {
      throw new HttpError(409, 'the job is still active: cancel it first', 'deleteActive');
    }
    let rawRemoved: string | null = null;
    if (withRaw) {
      const finding = await ctx.raw.refresh(row);
      if (finding.state === 'present' && finding.path) {
        // fs.rm does not follow symbolic links below the folder: only the links themselves go.
        await checkRawFolder(row, finding.path);
        await fs.promises.rm(finding.path, { recursive: true, force: true });
        rawRemoved = finding.path;
      }
    }
    jobs.remove(row.id);
    res.json({ deleted: row.id, raw_removed: rawRemoved });
  });

  return router;
}
