import { useEffect, useMemo, useState } from 'preact/hooks';
import { API, del, type Job, type PathMapAdvice, type QueuedTranscode, type Worker, type WorkerJob } from '../api.js';
import { Action, Empty, Progress, Section } from '../components.js';
import { duration, when } from '../format.js';
import { etaText, lang, number, percent, t, tKnown, tParts } from '../i18n/index.js';
import { reasonText } from '../../../shared/reasons.js';
import { FAST_MS, SLOW_MS, usePoll } from '../poll.js';

/** A worker with no slot count holds this many (coordinator/dispatch/transcode-queue.ts DEFAULT_SLOTS). */
const DEFAULT_SLOTS = 4;

/**
 * One running rip or transcode of a worker, or a chunk of a long title it encodes ("Stück 2 von 6:
 * title", its frames): title, phase, bar, percent, fps, elapsed and remaining time.
 * The worker list comes every 12 s; its progress and time left are taken from the job list, polled
 * every 4 s meanwhile (`fresh`), and the time running counts on from the browser's clock.
 */
function LiveJob({ job: w, fresh, worker }: { job: WorkerJob; fresh: Job | undefined; worker: string }) {
  // The job list's progress is the whole job's: a chunk keeps its own.
  const own = fresh && fresh.phase === w.phase && !w.encoded && !w.chunk;
  const job = own ? { ...w, progress: fresh.progress, eta_seconds: fresh.eta_sekunden } : w;
  const elapsed = Math.max(w.elapsed_seconds, Math.round((Date.now() - Date.parse(w.started_at)) / 1000) || 0);
  const chunk = job.chunk;
  const name = chunk ? t('workers.chunk', { n: chunk.number, of: chunk.of, title: job.title }) : job.title;
  return (
    <li data-testid="worker-job" data-job={job.id} data-chunk={chunk ? `${chunk.number}/${chunk.of}` : undefined}>
      <div class="worker-job-head">
        <strong>{name}</strong> <span class={`badge badge-${job.status}`}>{job.encoded ? t('workers.encoded') : t(job.phase === 'rip' ? 'workers.phase.rip' : 'workers.phase.transcode')}</span>
      </div>
      <Progress value={job.progress} label={t('workers.jobProgress', { title: name, worker })} />
      <p class="muted">
        {[
          percent(job.progress, job.progress < 10 ? 1 : 0),
          chunk && t('workers.chunkFrames', { done: number(chunk.frames_done), frames: number(chunk.frames) }),
          job.fps !== null && t('workers.fps', { n: number(job.fps, job.fps < 10 ? 1 : 0) }),
          t('workers.elapsed', { time: duration(elapsed) }),
          etaText(job.eta_seconds),
        ]
          .filter(Boolean)
          .join(' · ')}
      </p>
    </li>
  );
}

/** What a worker runs now and how many of its slots that takes. */
function WorkerNow({ w, jobs: fresh }: { w: Worker; jobs: Map<string, Job> }) {
  const jobs = w.jobs ?? [];
  return (
    <div class="worker-now" data-testid={`worker-now-${w.name}`}>
      <p>
        <strong>{t('workers.now')}:</strong> {t('workers.slots', { used: w.slots_used ?? 0, total: w.slots ?? DEFAULT_SLOTS })}
      </p>
      {jobs.length === 0 ? (
        <p class="muted">{t('workers.idle')}</p>
      ) : (
        <ul class="worker-jobs">
          {jobs.map((j) => (
            <LiveJob key={`${j.id}-${j.phase}-${j.chunk ? `${j.chunk.title_index}.${j.chunk.number}` : ''}`} job={j} fresh={fresh.get(j.id)} worker={w.name} />
          ))}
        </ul>
      )}
    </div>
  );
}

/** The transcodes waiting for a worker, in the order they are handed out, with who may take each. */
function TranscodeQueueList({ queue }: { queue: QueuedTranscode[] }) {
  if (queue.length === 0) return <p class="muted">{t('workers.queueEmpty')}</p>;
  return (
    <ol class="transcode-queue" data-testid="transcode-queue">
      {queue.map((q) => (
        <li key={q.job_id}>
          <strong>{q.title}</strong>{' '}
          <span class="muted">
            {t('workers.queueWaiting', { time: duration(q.waiting_seconds) })} · {q.may_take.length ? t('workers.queueFor', { list: q.may_take.join(', ') }) : t('workers.queueNobody')}
          </span>
        </li>
      ))}
    </ol>
  );
}

interface PresetRecommendation {
  preset: string | null;
  reason: string;
  reason_code?: string;
  reason_params?: Record<string, string>;
}

interface PresetAnswer {
  workers?: { name: string; node: string; categories?: { name: string; presets: string[] }[]; recommendation?: PresetRecommendation }[];
}

/** Why the preset is recommended, in the UI's language (the code of shared/reasons.ts); the server's English for a code this UI does not know. */
function recommendationReason(r: PresetRecommendation): string {
  const worded = r.reason_code && r.reason_params ? reasonText(r.reason_code, r.reason_params, lang()) : null;
  if (!worded) return r.reason;
  return r.reason_params?.skipped ? `${worded}; ${t('workers.presetSkipped', { list: r.reason_params.skipped })}` : worded;
}

export function WorkersPage() {
  // Worker data every 12 s (the spec's rhythm); while one runs something, the jobs' progress and the
  // queue every 4 s, as the job list.
  const [busy, setBusy] = useState(false);
  const workers = usePoll<Worker[]>('/capabilities', SLOW_MS);
  const queue = usePoll<QueuedTranscode[]>('/transcode-queue', busy ? FAST_MS : SLOW_MS);
  const jobList = usePoll<Job[]>(busy ? '/jobs' : null, FAST_MS);
  const fresh = useMemo(() => new Map((jobList.data ?? []).map((j) => [j.id, j])), [jobList.data]);
  const nowBusy = Boolean(workers.data?.some((w) => (w.jobs?.length ?? 0) > 0) || (queue.data?.length ?? 0) > 0);
  useEffect(() => {
    if (nowBusy !== busy) setBusy(nowBusy);
  }, [nowBusy, busy]);
  const presets = usePoll<PresetAnswer>('/presets', SLOW_MS * 5);
  const pathMap = usePoll<PathMapAdvice>('/worker-setup/pfad-map', SLOW_MS);
  const broker = usePoll<{ mqtt_url: string; coordinator_url: string; own_credentials: boolean }>('/worker-setup/broker', SLOW_MS * 5);
  return (
    <>
      <Section title={t('workers.title')} stale={workers.stale} error={workers.error}>
        {workers.data?.length === 0 && <Empty>{t('workers.none')}</Empty>}
        <div class="cards">
          {workers.data?.map((w) => {
            const p = presets.data?.workers?.find((x) => x.node === w.node);
            return (
              <article class="card" key={w.node} data-testid={`worker-${w.name}`}>
                <div class="card-body">
                  <h3>
                    {w.name} <span class={w.online ? 'badge ok' : 'badge warn'}>{w.online ? t('common.online') : t('common.offline')}</span>
                    {w.native && <span class="badge" title={t('workers.nativeHint')}>
                        {t('workers.native')}
                      </span>}
                  </h3>
                  <p class="muted">
                    {w.node}
                    {w.ip && ` · ${w.ip}`} · {t('workers.lastSeen', { when: when(w.last_seen) })}
                  </p>
                  {w.online && <WorkerNow w={w} jobs={fresh} />}
                  <p>{t('workers.encoders', { list: w.encoders.length ? w.encoders.join(', ') : t('common.none') })}</p>
                  <p>
                    {t('workers.keys', { n: w.schluessel })} {w.key_source && <span class="muted">({tKnown(`workers.keySource.${w.key_source}`) ?? w.key_source})</span>}
                  </p>
                  <details>
                    <summary>{t('workers.tools')}</summary>
                    <ul>
                      {Object.entries(w.tools).map(([tool, v]) => (
                        <li key={tool}>
                          {tool}: {v ?? t('workers.toolMissing')}
                        </li>
                      ))}
                    </ul>
                  </details>
                  {p?.recommendation && (
                    <p data-testid={`recommendation-${w.name}`}>
                      {t('workers.recommended')} <strong>{p.recommendation.preset ?? '–'}</strong> <span class="muted">({recommendationReason(p.recommendation)})</span>
                    </p>
                  )}
                  {p?.categories && (
                    <details data-testid={`presets-${w.name}`}>
                      <summary>{t('workers.presetsCount', { n: p.categories.reduce((n, c) => n + c.presets.length, 0), groups: p.categories.length })}</summary>
                      <div class="preset-groups">
                        {p.categories.map((c) => (
                          <details key={c.name}>
                            <summary>
                              {c.name} <span class="muted">({c.presets.length})</span>
                              {p.recommendation?.preset && c.presets.includes(p.recommendation.preset) && <span class="badge ok">{t('workers.recommendedBadge')}</span>}
                            </summary>
                            <ul>
                              {c.presets.map((preset) => (
                                <li key={preset}>{preset === p.recommendation?.preset ? <strong>{preset}</strong> : preset}</li>
                              ))}
                            </ul>
                          </details>
                        ))}
                      </div>
                    </details>
                  )}
                  {!w.online && <Action label={t('workers.remove')} kind="danger" run={() => del(`/workers/${encodeURIComponent(w.name)}`).then(workers.refresh)} />}
                </div>
              </article>
            );
          })}
        </div>
        {presets.error && !presets.data && <p class="muted">{t('workers.presetsError', { error: presets.error })}</p>}
      </Section>
      <Section title={t('workers.queueTitle')} stale={queue.stale} error={queue.error}>
        {queue.data ? <TranscodeQueueList queue={queue.data} /> : !queue.error && <p class="muted">{t('common.loading')}</p>}
      </Section>
      <Section title={t('workers.setupTitle')}>
        {broker.data ? (
          <div data-testid="worker-broker">
            <p>{tParts('workers.brokerText', { url: <code translate={false}>MQTT_URL={broker.data.mqtt_url}</code> })}</p>
            {broker.data.own_credentials ? (
              <p>
                {tParts('workers.ownCredentials', {
                  issue: <code translate={false}>curl -X POST {broker.data.coordinator_url}/api/workers/NAME/credentials</code>,
                  install: <code translate={false}>sudo bash scripts/install.sh --agent --coordinator-url {broker.data.mqtt_url} --mqtt-username NAME --mqtt-password-file FILE</code>,
                })}
              </p>
            ) : (
              <p>{t('workers.externalBroker')}</p>
            )}
            <p class="muted">{tParts('workers.legacySecret', { secret: <code>RIPWERK_BROKER_SECRET</code>, file: <code>DATA_DIR/broker-secret</code> })}</p>
          </div>
        ) : (
          <p class="muted">{t('workers.brokerState', { text: broker.error ?? t('common.loading') })}</p>
        )}
        <h3>{t('workers.pathMap')}</h3>
        {pathMap.data ? (
          <div data-testid="path-map">
            {pathMap.data.value && (
              <pre class="pre">
                {pathMap.data.variable}={pathMap.data.value}
              </pre>
            )}
            <p class={pathMap.data.entries.length ? 'muted' : 'warn'} data-testid="path-map-hint">
              {t(pathMap.data.entries.length === 0 ? 'workers.pathMapNone' : pathMap.data.value ? 'workers.pathMapSet' : 'workers.pathMapNfsOnly', { variable: pathMap.data.variable })}
            </p>
            {pathMap.data.entries.length > 0 && (
              <ul>
                {pathMap.data.entries.map((e) => (
                  <li key={e.name}>
                    {e.mount_point} ← {e.protocol} {e.source}
                    {e.protocol === 'NFS' && <span class="muted"> {t('workers.nfsHint')}</span>}
                  </li>
                ))}
              </ul>
            )}
          </div>
        ) : (
          <p class="muted">{t('workers.pathMapState', { text: pathMap.error ?? t('common.loading') })}</p>
        )}
        <h3>{t('workers.nativeTitle')}</h3>
        <p class="muted">{t('workers.nativeText')}</p>
        <ul>
          <li>
            <a href={`${API}/worker-setup/paket`}>{t('workers.package')}</a>
          </li>
          <li>
            <a href={`${API}/worker-setup/desktop`}>{t('workers.script')}</a>
          </li>
          <li>
            <a href={`${API}/worker-setup/desktop-exe`}>{t('workers.exe')}</a>
          </li>
        </ul>
      </Section>
    </>
  );
}
