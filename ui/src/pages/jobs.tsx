import { useEffect, useState } from 'preact/hooks';
import { API, del, get, post, type AudioStream, type FileStreams, type Job, type JobDetail } from '../api.js';
import { chunkSharesText, phaseLine } from '../job-phase.js';
import { Action, Dialog, Empty, PathText, Progress, Section } from '../components.js';
import { useMediaRoot } from '../media-path.js';
import { bytes, statusText, when } from '../format.js';
import { etaText, languageName, percent, t, tKnown, type MessageKey } from '../i18n/index.js';
import { FAST_MS, usePoll } from '../poll.js';
import { failureKind } from '../../../shared/failure-kinds.js';

const ACTIVE = ['pending', 'processing', 'transcoding', 'canceling'];
/** The statuses the API transcodes or rips again (coordinator/jobs/job-status.ts isRetryable): not a completed job. */
const RETRYABLE = ['failed', 'canceled'];

/** One file of GET /jobs/{id}/files?subfolders=true: a bare name, and the folder below the output folder it lies in. */
interface OutputFile {
  name: string;
  size: number;
  folder?: string;
}

/** The file's download address: its bare name, and its folder as ?folder= (the spec's name has no slash). */
const fileHref = (jobId: string, f: OutputFile): string => `${API}/jobs/${jobId}/files/${encodeURIComponent(f.name)}${f.folder ? `?folder=${encodeURIComponent(f.folder)}` : ''}`;

function Files({ job }: { job: Job }) {
  const [files, setFiles] = useState<OutputFile[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    get<OutputFile[]>(`/jobs/${job.id}/files?subfolders=true`).then(setFiles, (err: Error) => setError(err.message));
  }, [job.id]);
  if (error) return <p class="muted" translate={false}>{error}</p>;
  if (!files) return <p class="muted">{t('common.loading')}</p>;
  if (!files.length) return <p class="muted">{t('jobs.noFiles')}</p>;
  return (
    <ul class="files">
      {files.map((f) => {
        const shown = f.folder ? `${f.folder}/${f.name}` : f.name;
        return (
          <li key={shown}>
            <a href={fileHref(job.id, f)} download={f.name} translate={false}>
              {shown}
            </a>{' '}
            <span class="muted">{bytes(f.size)}</span>
          </li>
        );
      })}
    </ul>
  );
}

const streamText = (s: AudioStream): string => [languageName(s.language), s.codec.toUpperCase(), s.channels ? `${s.channels === 6 ? '5.1' : s.channels === 8 ? '7.1' : s.channels === 2 ? '2.0' : s.channels}` : ''].filter(Boolean).join(' ');

/** The audio and subtitle streams of each finished file (GET /jobs/{id}/detail). */
function Streams({ streams }: { streams: FileStreams[] }) {
  if (!streams.length) return null;
  return (
    <ul class="streams" data-testid="job-streams">
      {streams.map((f) => (
        <li key={f.file}>
          <span translate={false}>{f.file}</span>: {t('jobs.audio', { list: f.audio.map(streamText).join(', ') || t('common.none') })} · {t('jobs.subtitles', { list: f.subtitles.map((s) => languageName(s.language)).join(', ') || t('common.none') })}
        </li>
      ))}
    </ul>
  );
}

/** The job's own log (GET /jobs/{id}/detail logs), oldest first, warnings and errors marked. */
function JobLog({ logs }: { logs: JobDetail['logs'] }) {
  return (
    <div class="job-log" data-testid="job-log">
      <h3>{t('jobs.log')}</h3>
      {logs.length === 0 ? (
        <p class="muted">{t('jobs.logEmpty')}</p>
      ) : (
        <ol class="log-lines">
          {logs.map((l, i) => {
            const level = tKnown(`jobs.logLevel.${l.level}`);
            return (
              <li key={`${l.ts}-${i}`} class={`log-${l.level}`} data-level={l.level}>
                <time class="muted">{when(l.ts)}</time> {level && <strong>{level}: </strong>}
                <span translate={false}>{l.message}</span>
              </li>
            );
          })}
        </ol>
      )}
    </div>
  );
}

/** The expanded job: its log, refreshed while the job runs, and a finished job's streams and files. */
function JobDetails({ job, active }: { job: Job; active: boolean }) {
  const detail = usePoll<JobDetail>(`/jobs/${job.id}/detail`, active ? FAST_MS : 0);
  const root = useMediaRoot();
  return (
    <div class="job-detail">
      {job.output_path && (
        <p class="muted" data-testid="job-output">
          {t('jobs.outputLabel')} <PathText path={job.output_path} root={root} />
        </p>
      )}
      {job.status === 'completed' && detail.data && <Streams streams={detail.data.streams} />}
      {job.status === 'completed' && <Files job={job} />}
      {detail.data ? <JobLog logs={detail.data.logs} /> : detail.error ? <p class="error" translate={false}>{detail.error}</p> : <p class="muted">{t('common.loading')}</p>}
    </div>
  );
}

/** rip → compress → file away, the running step marked, "Datei 1 von 2" while a transcode has several files. */
function Phases({ job }: { job: Job }) {
  const line = phaseLine(job);
  if (!line) return null;
  return (
    <ol class="phases" aria-label={t('jobs.phases')} data-testid="job-phases">
      {line.steps.map(({ step, state }) => (
        <li key={step} class={`phase-${state}`} data-state={state} aria-current={state === 'now' ? 'step' : undefined}>
          {state === 'done' ? '✓ ' : ''}
          {t(`jobs.step.${step}` as MessageKey)}
          {state === 'now' && step === 'transcode' && line.file ? ` (${t('jobs.fileOf', line.file)})` : ''}
        </li>
      ))}
    </ol>
  );
}

function CancelDialog({ job, onClose, onDone }: { job: Job; onClose(): void; onDone(): void }) {
  return (
    <Dialog title={t('jobs.cancelTitle', { title: job.title })} onClose={onClose}>
      <p>{t('jobs.cancelText')}</p>
      <div class="row">
        <Action
          label={t('jobs.cancelConfirm')}
          kind="danger"
          testId="cancel-confirm"
          run={async () => {
            await post(`/jobs/${job.id}/cancel`);
            onDone();
          }}
        />
        <button type="button" onClick={onClose}>
          {t('jobs.cancelKeep')}
        </button>
      </div>
    </Dialog>
  );
}

/** An audio CD's AccurateRip verdict in a line (meta.accuraterip): a warning when a track differs. */
function AccurateRip({ job }: { job: Job }) {
  const ar = job.meta?.accuraterip;
  if (!ar) return null;
  const n = ar.tracks.length;
  const accurate = ar.tracks.filter((tr) => tr.status === 'accurate');
  const line = (cls: string, text: string) => (
    <p class={cls} data-testid="job-accuraterip" data-status={ar.status}>
      {text}
    </p>
  );
  if (ar.status === 'accurate') return line('ok', `✓ ${t('jobs.arAccurate', { n, confidence: `${Math.min(...accurate.map((tr) => tr.confidence ?? 0))}+` })}`);
  if (ar.status === 'partly_accurate') return line('ok', t('jobs.arPartly', { accurate: accurate.length, n }));
  if (ar.status === 'inaccurate') return line('warn', `⚠ ${t('jobs.arInaccurate', { tracks: ar.tracks.filter((tr) => tr.status === 'inaccurate').map((tr) => tr.number).join(', ') })}`);
  return line('muted', t(ar.status === 'not_in_database' ? 'jobs.arUnknown' : 'jobs.arUnavailable'));
}

function DeleteDialog({ job, onClose, onDone }: { job: Job; onClose(): void; onDone(): void }) {
  const [raw, setRaw] = useState(false);
  return (
    <Dialog title={t('jobs.deleteTitle', { title: job.title })} onClose={onClose}>
      <p>{t('jobs.deleteText')}</p>
      <label class="check">
        <input type="checkbox" checked={raw} onChange={(e) => setRaw((e.target as HTMLInputElement).checked)} data-testid="delete-raw" />
        {t('jobs.deleteRaw')}
      </label>
      <div class="row">
        <Action
          label={raw ? t('jobs.deleteBoth') : t('jobs.deleteOnly')}
          kind="danger"
          run={async () => {
            await del(`/jobs/${job.id}${raw ? '?rohdaten=true' : ''}`);
            onDone();
          }}
        />
        <button type="button" onClick={onClose}>
          {t('common.cancel')}
        </button>
      </div>
    </Dialog>
  );
}

/**
 * Why a job failed: the kind in the UI's language, then the reason in the English words of the part that
 * wrote it (a tool's message, a path), marked as English for screen readers and not machine-translated.
 */
function JobError({ job }: { job: Job }) {
  const kind = failureKind(job.status, job.error);
  return (
    <p class="error" data-testid="job-error">
      <strong>{kind === 'other' ? t('jobs.errorOther') : t(`failure.${kind}`)}:</strong>{' '}
      <span translate={false} lang="en">
        {job.error}
      </span>
    </p>
  );
}

function JobRow({ job, refresh }: { job: Job; refresh(): void }) {
  const [open, setOpen] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const [canceling, setCanceling] = useState(false);
  const active = ACTIVE.includes(job.status);
  const act = (p: string, body?: unknown) => async () => {
    await post(`/jobs/${job.id}/${p}`, body);
    refresh();
  };
  // The rip had read errors (the ripper's count, meta.read_errors): a careful re-read may get more of the disc.
  const readErrors = RETRYABLE.includes(job.status) && job.meta?.disc_type !== 'cd' ? (job.meta?.read_errors ?? 0) : 0;
  return (
    <li class={`job status-${job.status}`} data-testid={`job-${job.id}`}>
      <div class="job-head">
        <button type="button" class="link job-title" aria-expanded={open} onClick={() => setOpen(!open)}>
          {job.title}
        </button>
        <span class={`badge badge-${job.status}`} data-testid="job-status" data-status={job.status}>
          {statusText(job.status)}
        </span>
      </div>
      <Phases job={job} />
      {active && <Progress value={job.progress} label={t('jobs.progress', { title: job.title })} />}
      <p class="muted">
        {[
          active && percent(job.progress, job.progress < 10 ? 1 : 0),
          active && etaText(job.eta_sekunden),
          job.transcode_node && t(active ? 'jobs.transcodeOn' : 'jobs.transcodedOn', { node: job.transcode_node }),
          job.device,
          when(job.created_at),
        ]
          .filter(Boolean)
          .join(' · ')}
      </p>
      {chunkSharesText(job.meta) && (
        <p class="muted" data-testid="job-chunks">
          {t('jobs.chunkShares', { shares: chunkSharesText(job.meta) ?? '' })}
        </p>
      )}
      {job.error && <JobError job={job} />}
      {readErrors > 0 && (
        <p class="muted" data-testid="job-read-errors">
          {t('jobs.retryCarefulHint', { count: readErrors })}
        </p>
      )}
      {job.status === 'completed' && <AccurateRip job={job} />}
      {job.status === 'completed' && job.meta?.episodes_guessed && (
        <p class="warn" data-testid="job-episodes-guessed">
          {t('jobs.episodesGuessed')}
        </p>
      )}
      <div class="row">
        {active && job.status !== 'canceling' && (
          <button type="button" onClick={() => setCanceling(true)} data-testid="job-cancel">
            {t('jobs.cancel')}
          </button>
        )}
        {RETRYABLE.includes(job.status) && job.can_retry && <Action label={t('jobs.retryTranscode')} run={act('retry-transcode')} />}
        {RETRYABLE.includes(job.status) && <Action label={t('jobs.retryRip')} run={act('retry-rip')} />}
        {readErrors > 0 && <Action label={t('jobs.retryCareful')} run={act('retry-rip', { careful: true })} testId="job-retry-careful" />}
        {job.status === 'completed' && (
          <a class="button" href={`#/metadaten/job/${job.id}`} data-testid="job-correct">
            {t('jobs.correct')}
          </a>
        )}
        {!active && (
          <button type="button" class="danger" onClick={() => setDeleting(true)}>
            {t('jobs.delete')}
          </button>
        )}
      </div>
      {open && <JobDetails job={job} active={active} />}
      {canceling && (
        <CancelDialog
          job={job}
          onClose={() => setCanceling(false)}
          onDone={() => {
            setCanceling(false);
            refresh();
          }}
        />
      )}
      {deleting && (
        <DeleteDialog
          job={job}
          onClose={() => setDeleting(false)}
          onDone={() => {
            setDeleting(false);
            refresh();
          }}
        />
      )}
    </li>
  );
}

export function JobsPage() {
  const jobs = usePoll<Job[]>('/jobs', FAST_MS);
  return (
    <Section
      title={t('jobs.title')}
      stale={jobs.stale}
      error={jobs.error}
      actions={
        <a class="button" href={`${API}/jobs/export`} download>
          {t('jobs.export')}
        </a>
      }
    >
      {jobs.data === null && !jobs.stale && <p class="muted">{t('common.loading')}</p>}
      {jobs.data?.length === 0 && <Empty>{t('jobs.none')}</Empty>}
      <ul class="jobs">
        {jobs.data?.map((j) => (
          <JobRow key={j.id} job={j} refresh={jobs.refresh} />
        ))}
      </ul>
    </Section>
  );
}
