import { useState } from 'preact/hooks';
import { post, posterSrc, type Device, type Job, type Worker } from '../api.js';
import { Action, Empty, Section } from '../components.js';
import { ripWarning, type DiscKinds } from '../disc-support.js';
import { librarySummaryText, recognitionText } from '../disc-titles.js';
import { foundText, ofThisInsert, previousRipText, unreadableText } from '../disc-state.js';
import { bytes, discTypeText } from '../format.js';
import { t, tCount, tKnown } from '../i18n/index.js';
import { FAST_MS, SLOW_MS, usePoll } from '../poll.js';
import { RipDialog } from './rip-dialog.js';
import { SessionLine } from './session-line.js';
import { keyMatches } from '../../../shared/disc-key.js';

/** The part of GET /system/info the drive cards read: what each worker can rip (absent: unknown). */
interface WorkerKinds {
  workers: { name: string; disc_kinds?: DiscKinds | null }[];
}

/**
 * The latest job of a drive whose rip is done: the disc may come out while the transcode runs. The
 * job's fingerprint is the disc's identity, or (a job made before content ids) its label fingerprint;
 * a job of an earlier insert of the same disc is no rip of this one (the card says it was ripped before).
 */
function ripDone(device: Device, jobs: Job[]): Job | undefined {
  const disc = device.disc;
  return jobs.find(
    (j) =>
      j.device === device.name &&
      j.meta?.rip_fertig === true &&
      (disc ? keyMatches(j.meta?.fingerprint, disc) && ofThisInsert(j.created_at, disc) : j.meta?.fingerprint === undefined) &&
      ['transcoding', 'completed', 'canceling'].includes(j.status),
  );
}

function DriveCard({ device, jobs, kinds, onRip }: { device: Device; jobs: Job[]; kinds: DiscKinds | null; onRip(d: Device): void }) {
  const disc = device.disc;
  const warning = disc && device.worker ? ripWarning(device.worker, kinds, disc.type) : null;
  const done = ripDone(device, jobs);
  const src = disc?.poster_url ?? posterSrc(disc?.poster ?? null);
  // A disc recognised by its content (older coordinators send neither field).
  const recognised = recognitionText(disc?.recognised);
  const inLibrary = disc ? librarySummaryText(disc.library, disc.already_ripped) : null;
  const found = disc ? foundText(disc) : null;
  const unreadable = disc ? unreadableText(disc) : null;
  // Not while its rip of this insert is shown as done: that job is the earlier rip.
  const previous = disc && !done ? previousRipText(disc.previous_rip) : null;
  return (
    <article class="card drive" data-testid={`drive-${device.name}`}>
      {src ? <img class="poster" src={src} alt="" loading="lazy" /> : <div class="poster none" aria-hidden="true" />}
      <div class="card-body">
        <h3>{device.name}</h3>
        <p class="muted">
          {[device.vendor, device.model].filter(Boolean).join(' ') || t('drive.generic')} · {device.worker ?? device.node}
          {!device.worker_online && <strong class="warn"> · {t('drive.workerOffline')}</strong>}
        </p>
        {disc ? (
          <div class="disc">
            <p class="disc-title" data-testid="disc-title">
              {disc.title}
              {disc.year ? ` (${disc.year})` : ''}
            </p>
            <p class="muted">
              {discTypeText(disc.type)} · {bytes(disc.size_bytes)}
              {disc.audio_tracks ? ` · ${tCount('drive.audioTracks', disc.audio_tracks)}` : ''}
              {disc.album && ` · ${tKnown(`drive.albumSource.${disc.album.source}`) ?? disc.album.source}`}
              {disc.suggestions?.length ? ` · ${tCount('drive.moreReleases', disc.suggestions.length)}` : ''}
            </p>
            {found && (
              <p class="disc-note" data-testid="disc-found">
                {found}
              </p>
            )}
            {unreadable && (
              <p class="warn" role="alert" data-testid="disc-unreadable">
                {unreadable}
              </p>
            )}
            {recognised && (
              <p class="disc-note ok" data-testid="disc-recognised">
                <span aria-hidden="true">✓ </span>
                {recognised}
              </p>
            )}
            {inLibrary ? (
              <p class="disc-note" data-testid="disc-library">
                {inLibrary}
              </p>
            ) : (
              disc.already_ripped && !previous && <p class="badge">{t('drive.alreadyRipped')}</p>
            )}
            {previous && (
              <p class="disc-note" data-testid="disc-previous">
                {previous}
              </p>
            )}
          </div>
        ) : (
          <p class="muted">{device.status === 'tray_open' ? t('drive.trayOpen') : t('drive.noDisc')}</p>
        )}
        {done && (
          <p class="ok" role="status" data-testid="rip-done">
            {t('drive.ripDone')}
          </p>
        )}
        <SessionLine drive={device.name} />
        {device.busy_job && <p class="muted">{t('drive.busy', { id: device.busy_job.slice(0, 8) })}</p>}
        {warning && !device.busy_job && (
          <p class="warn" role="alert" data-testid="rip-warning">
            {warning.text}
            {warning.command && <code>{warning.command}</code>}
          </p>
        )}
        <div class="row">
          <button type="button" class="primary" disabled={!disc || Boolean(unreadable) || Boolean(device.busy_job) || !device.worker_online} onClick={() => onRip(device)} data-testid="rip-open">
            {t('drive.rip')}
          </button>
          <Action label={t('drive.eject')} disabled={!disc || Boolean(device.busy_job)} run={() => post(`/devices/${encodeURIComponent(device.name)}/eject`)} />
        </div>
      </div>
    </article>
  );
}

export function DrivesPage() {
  const devices = usePoll<Device[]>('/devices', FAST_MS);
  const jobs = usePoll<Job[]>('/jobs', FAST_MS);
  const workers = usePoll<Worker[]>('/capabilities', SLOW_MS);
  const info = usePoll<WorkerKinds>('/system/info', SLOW_MS);
  const kindsOf = (worker: string | null) => info.data?.workers.find((w) => w.name === worker)?.disc_kinds ?? null;
  const [ripping, setRipping] = useState<Device | null>(null);
  const [started, setStarted] = useState<Job | null>(null);
  return (
    <Section title={t('drives.title')} stale={devices.stale} error={devices.error}>
      {started && (
        <p class="ok" role="status">
          {t('drives.started', { title: started.title })} <a href="#/auftraege">{t('drives.toJobs')}</a>
        </p>
      )}
      {devices.data === null && !devices.stale && <p class="muted">{t('common.loading')}</p>}
      {devices.data?.length === 0 && <Empty>
          {t('drives.none')} {workers.data?.length ? t('drives.noDrivesReported') : t('drives.noWorker')}
        </Empty>}
      <div class="cards">
        {devices.data?.map((d) => (
          <DriveCard key={d.name} device={d} jobs={jobs.data ?? []} kinds={kindsOf(d.worker)} onRip={setRipping} />
        ))}
      </div>
      {ripping && (
        <RipDialog
          device={ripping}
          onClose={() => setRipping(null)}
          onStarted={(job) => {
            setRipping(null);
            setStarted(job);
            devices.refresh();
            jobs.refresh();
          }}
        />
      )}
    </Section>
  );
}
