import { useEffect, useState } from 'preact/hooks';
import { API, del, get, post, type Job } from '../api.js';
import { Action, Dialog, Empty, Progress, Section } from '../components.js';
import { bytes, STATUS_TEXT, when } from '../format.js';
import { FAST_MS, usePoll } from '../poll.js';

const ACTIVE = ['pending', 'processing', 'transcoding', 'canceling'];

function Files({ job }: { job: Job }) {
  const [files, setFiles] = useState<{ name: string; size: number }[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    get<{ name: string; size: number }[]>(`/jobs/${job.id}/files`).then(setFiles, (err: Error) => setError(err.message));
  }, [job.id]);
  if (error) return <p class="muted">{error}</p>;
  if (!files) return <p class="muted">lädt …</p>;
  if (!files.length) return <p class="muted">keine Dateien</p>;
  return (
    <ul class="files">
      {files.map((f) => (
        <li key={f.name}>
          <a href={`${API}/jobs/${job.id}/files/${encodeURIComponent(f.name)}`} download={f.name}>
            {f.name}
          </a>{' '}
          <span class="muted">{bytes(f.size)}</span>
        </li>
      ))}
    </ul>
  );
}

function DeleteDialog({ job, onClose, onDone }: { job: Job; onClose(): void; onDone(): void }) {
  const [raw, setRaw] = useState(false);
  return (
    <Dialog title={`Auftrag „${job.title}“ löschen`} onClose={onClose}>
      <p>Der Auftrag verschwindet aus der Liste. Die fertigen Dateien bleiben.</p>
      <label class="check">
        <input type="checkbox" checked={raw} onChange={(e) => setRaw((e.target as HTMLInputElement).checked)} data-testid="delete-raw" />
        Auch die Rohdaten löschen (ein erneutes Komprimieren ist dann nicht mehr möglich)
      </label>
      <div class="row">
        <Action
          label={raw ? 'Auftrag und Rohdaten löschen' : 'Nur den Auftrag löschen'}
          kind="danger"
          run={async () => {
            await del(`/jobs/${job.id}${raw ? '?rohdaten=true' : ''}`);
            onDone();
          }}
        />
        <button type="button" onClick={onClose}>
          Abbrechen
        </button>
      </div>
    </Dialog>
  );
}

function JobRow({ job, refresh }: { job: Job; refresh(): void }) {
  const [open, setOpen] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const active = ACTIVE.includes(job.status);
  const act = (p: string) => async () => {
    await post(`/jobs/${job.id}/${p}`);
    refresh();
  };
  return (
    <li class={`job status-${job.status}`} data-testid={`job-${job.id}`}>
      <div class="job-head">
        <button type="button" class="link job-title" aria-expanded={open} onClick={() => setOpen(!open)}>
          {job.title}
        </button>
        <span class="badge" data-testid="job-status">
          {STATUS_TEXT[job.status] ?? job.status}
        </span>
      </div>
      {active && <Progress value={job.progress} label={`Fortschritt ${job.title}`} />}
      <p class="muted">
        {active && `${job.progress.toFixed(job.progress < 10 ? 1 : 0).replace('.', ',')} %`}
        {job.eta_text && ` · noch ${job.eta_text}`}
        {job.transcode_node && ` · komprimiert auf ${job.transcode_node}`}
        {job.device && ` · ${job.device}`} · {when(job.created_at)}
      </p>
      {job.error && <p class="error">{job.error}</p>}
      <div class="row">
        {active && job.status !== 'canceling' && <Action label="Abbrechen" run={act('cancel')} />}
        {!active && job.can_retry && <Action label="Erneut komprimieren" run={act('retry-transcode')} />}
        {!active && job.status !== 'completed' && <Action label="Erneut rippen" run={act('retry-rip')} />}
        {!active && (
          <button type="button" class="danger" onClick={() => setDeleting(true)}>
            Löschen …
          </button>
        )}
      </div>
      {open && (
        <div class="job-detail">
          {job.output_path && <p class="muted">Ausgabe: {job.output_path}</p>}
          {job.status === 'completed' && <Files job={job} />}
        </div>
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
      title="Aufträge"
      stale={jobs.stale}
      error={jobs.error}
      actions={
        <a class="button" href={`${API}/jobs/export`} download>
          CSV-Export
        </a>
      }
    >
      {jobs.data === null && !jobs.stale && <p class="muted">lädt …</p>}
      {jobs.data?.length === 0 && <Empty>Noch keine Aufträge. Lege eine Disc ein und starte unter „Laufwerke“ einen Rip.</Empty>}
      <ul class="jobs">
        {jobs.data?.map((j) => (
          <JobRow key={j.id} job={j} refresh={jobs.refresh} />
        ))}
      </ul>
    </Section>
  );
}
