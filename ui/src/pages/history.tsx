import { useState } from 'preact/hooks';
import type { Job, JobStats } from '../../../shared/api-types.js';
import { Empty, Section } from '../components.js';
import { bytes, discTypeText, statusText, when } from '../format.js';
import { durationWords, filterJobs, jobKind, jobSeconds, KIND_FILTERS, NO_FILTER, savedWords, SORTS, sortJobs, STATUS_FILTERS, weekLabel, type HistoryFilter, type KindFilter, type Sort, type StatusFilter } from '../history.js';
import { locale, number, percent, t } from '../i18n/index.js';
import { SLOW_MS, usePoll } from '../poll.js';

/** The periods offered; GET /stats takes 1 to 104 weeks. */
const PERIODS = [4, 12, 26, 52];
const BAR_W = 24;
const CHART_H = 110;
const LABEL_H = 16;

/** Jobs per ISO week as stacked bars (completed, failed, canceled) in plain SVG; the numbers are also in a table for screen readers. */
function WeekChart({ weeks }: { weeks: JobStats['per_week'] }) {
  const max = Math.max(1, ...weeks.map((w) => w.completed + w.failed + w.canceled));
  const scale = (CHART_H - LABEL_H - 14) / max;
  // Every week's label when there is room; with many weeks every few.
  const every = Math.ceil(weeks.length / 13);
  const sum = (k: 'completed' | 'failed' | 'canceled') => weeks.reduce((n, w) => n + w[k], 0);
  const totals = t('history.totals', { completed: number(sum('completed')), failed: number(sum('failed')), canceled: number(sum('canceled')) });
  return (
    <>
      <svg class="week-chart" viewBox={`0 0 ${weeks.length * BAR_W} ${CHART_H}`} role="img" aria-label={t('history.chartLabel', { summary: totals })} data-testid="week-chart">
        {weeks.map((w, i) => {
          const x = i * BAR_W + 3;
          let y = CHART_H - LABEL_H;
          const parts = (['completed', 'failed', 'canceled'] as const).map((k) => {
            const h = w[k] * scale;
            y -= h;
            return h > 0 ? <rect key={k} class={`bar-${k}`} x={x} y={y} width={BAR_W - 6} height={h} /> : null;
          });
          const total = w.completed + w.failed + w.canceled;
          return (
            <g key={w.week}>
              {parts}
              {total > 0 && (
                <text x={x + (BAR_W - 6) / 2} y={y - 3} text-anchor="middle" class="bar-count">
                  {number(total)}
                </text>
              )}
              {i % every === 0 && (
                <text x={x + (BAR_W - 6) / 2} y={CHART_H - 3} text-anchor="middle" class="bar-label">
                  {weekLabel(w.week).replace(/^\D+/, '')}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <p class="legend" data-testid="week-totals">
        <span class="key key-completed" aria-hidden="true" /> {statusText('completed')} <span data-testid="total-completed">{number(sum('completed'))}</span>
        {' · '}
        <span class="key key-failed" aria-hidden="true" /> {statusText('failed')} <span data-testid="total-failed">{number(sum('failed'))}</span>
        {' · '}
        <span class="key key-canceled" aria-hidden="true" /> {statusText('canceled')} <span data-testid="total-canceled">{number(sum('canceled'))}</span>
      </p>
      {/* In a hidden box, not hidden itself: a table grows to its content whatever its width, and widened the phone's page to 421 px. */}
      <div class="sr-only">
        <table>
          <caption>{t('history.perWeek')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('history.weekRow')}</th>
              <th scope="col">{statusText('completed')}</th>
              <th scope="col">{statusText('failed')}</th>
              <th scope="col">{statusText('canceled')}</th>
            </tr>
          </thead>
          <tbody>
            {weeks.map((w) => (
              <tr key={w.week}>
                <th scope="row">{weekLabel(w.week)}</th>
                <td>{w.completed}</td>
                <td>{w.failed}</td>
                <td>{w.canceled}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

/** A horizontal bar of a share (0..1), drawn with CSS: the words beside it carry the number. */
function Bar({ share, kind }: { share: number; kind: string }) {
  return (
    <span class={`hbar hbar-${kind}`} aria-hidden="true">
      <span style={{ width: `${Math.max(0, Math.min(1, share)) * 100}%` }} />
    </span>
  );
}

function KindTimes({ kinds }: { kinds: JobStats['per_kind'] }) {
  if (!kinds.length) return <Empty>{t('history.noJobs')}</Empty>;
  const longest = Math.max(1, ...kinds.map((k) => (k.rip.median_seconds ?? 0) + (k.transcode.median_seconds ?? 0)));
  const stage = (s: JobStats['per_kind'][number]['rip']) => (s.jobs ? t('history.stageTime', { median: durationWords(s.median_seconds), total: durationWords(s.total_seconds) }) : t('history.stageUnknown'));
  const anyUnknown = kinds.some((k) => k.rip.jobs < k.jobs);
  return (
    <>
      <ul class="kind-times" data-testid="kind-times">
        {kinds.map((k) => (
          <li key={k.kind} data-kind={k.kind}>
            <strong>{discTypeText(k.kind)}</strong> <span class="muted">{t('history.kindJobs', { n: number(k.jobs) })}</span>
            <Bar share={((k.rip.median_seconds ?? 0) + (k.transcode.median_seconds ?? 0)) / longest} kind="time" />
            <span class="stage">
              {t('history.rip')}: {stage(k.rip)}
            </span>
            {k.kind !== 'cd' && (
              <span class="stage">
                {t('history.transcode')}: {stage(k.transcode)}
              </span>
            )}
          </li>
        ))}
      </ul>
      {anyUnknown && <p class="muted">{t('history.timesOlder')}</p>}
    </>
  );
}

function Space({ space }: { space: JobStats['space'] }) {
  // Both bars on one scale: finished files larger than their raw data (tiny test discs, audio) show so.
  const largest = Math.max(1, space.raw_bytes, space.output_bytes);
  return (
    <div data-testid="space">
      {space.jobs ? (
        <>
          <p class={`big-number${space.saved_bytes < 0 ? ' grew' : ''}`} data-testid="space-saved">
            {savedWords(space.saved_bytes)}
          </p>
          <p>{t('history.spaceDetail', { raw: bytes(space.raw_bytes), output: bytes(space.output_bytes), share: percent(space.raw_bytes ? (space.output_bytes / space.raw_bytes) * 100 : 0), n: number(space.jobs) })}</p>
          <p class="bar-line">
            <span>{t('history.spaceRaw')}</span> <Bar share={space.raw_bytes / largest} kind="raw" />
          </p>
          <p class="bar-line">
            <span>{t('history.spaceOutput')}</span> <Bar share={space.output_bytes / largest} kind="output" />
          </p>
        </>
      ) : (
        <Empty>{t('history.spaceNone')}</Empty>
      )}
      {space.without_sizes > 0 && <p class="muted" data-testid="without-sizes">{t('history.withoutSizes', { n: number(space.without_sizes) })}</p>}
    </div>
  );
}

function Failures({ failures }: { failures: JobStats['failures'] }) {
  if (!failures.length) return <Empty>{t('history.noFailures')}</Empty>;
  const most = Math.max(...failures.map((f) => f.count));
  return (
    <ul class="failures" data-testid="failures">
      {failures.map((f) => (
        <li key={f.kind} data-kind={f.kind}>
          <span>{t('history.failureCount', { kind: t(`failure.${f.kind}`), n: number(f.count) })}</span>
          <Bar share={f.count / most} kind="failure" />
          {f.example && (
            <span class="muted example">
              {t('history.example')}{' '}
              <span translate={false}>{f.example}</span>
            </span>
          )}
        </li>
      ))}
    </ul>
  );
}

function Select<T extends string>({ id, label, value, options, text, onChange }: { id: string; label: string; value: T; options: readonly T[]; text: (o: T) => string; onChange: (v: T) => void }) {
  return (
    <label for={id}>
      {label}
      <select id={id} value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value as T)}>
        {options.map((o) => (
          <option key={o} value={o}>
            {text(o)}
          </option>
        ))}
      </select>
    </label>
  );
}

function HistoryList({ jobs }: { jobs: Job[] }) {
  const [filter, setFilter] = useState<HistoryFilter>(NO_FILTER);
  const [sort, setSort] = useState<Sort>('newest');
  const set = (patch: Partial<HistoryFilter>) => setFilter({ ...filter, ...patch });
  const shown = sortJobs(filterJobs(jobs, filter), sort, new Intl.Collator(locale()));
  return (
    <>
      <form class="history-filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <Select id="h-status" label={t('history.filterStatus')} value={filter.status} options={STATUS_FILTERS} text={(o: StatusFilter) => (o === '' ? t('history.all') : o === 'active' ? t('history.active') : statusText(o))} onChange={(status) => set({ status })} />
        <Select id="h-kind" label={t('history.filterKind')} value={filter.kind} options={KIND_FILTERS} text={(o: KindFilter) => (o === '' ? t('history.all') : discTypeText(o))} onChange={(kind) => set({ kind })} />
        <label for="h-text" class="wide">
          {t('history.filterText')}
          <input id="h-text" type="search" value={filter.text} onInput={(e) => set({ text: (e.target as HTMLInputElement).value })} />
        </label>
        <label for="h-from">
          {t('history.filterFrom')}
          <input id="h-from" type="date" value={filter.from} onInput={(e) => set({ from: (e.target as HTMLInputElement).value })} />
        </label>
        <label for="h-to">
          {t('history.filterTo')}
          <input id="h-to" type="date" value={filter.to} onInput={(e) => set({ to: (e.target as HTMLInputElement).value })} />
        </label>
        <Select id="h-sort" label={t('history.sort')} value={sort} options={SORTS} text={(o: Sort) => t(`history.sort.${o}`)} onChange={setSort} />
      </form>
      <div class="row">
        <p role="status" data-testid="history-count">
          {t('history.shown', { shown: number(shown.length), total: number(jobs.length) })}
        </p>
        <div class="spacer" />
        <button type="button" onClick={() => setFilter(NO_FILTER)} disabled={filter === NO_FILTER}>
          {t('history.reset')}
        </button>
      </div>
      {shown.length === 0 ? (
        <Empty>{t('history.nothing')}</Empty>
      ) : (
        <ol class="history-list" data-testid="history-list">
          {shown.map((job) => {
            const took = jobSeconds(job);
            return (
              <li key={job.id} data-job={job.id}>
                <div class="job-head">
                  <span class="job-title" translate={false}>
                    {job.title}
                  </span>
                  <span class={`badge badge-${job.status}`}>{statusText(job.status)}</span>
                </div>
                <p class="muted">
                  {discTypeText(jobKind(job))} · <time dateTime={job.created_at}>{when(job.created_at)}</time>
                  {took !== null && ` · ${t('history.took', { time: durationWords(took) })}`}
                </p>
              </li>
            );
          })}
        </ol>
      )}
    </>
  );
}

/** "Verlauf & Statistik": the figures of GET /stats and the filterable, sortable job history. */
export function HistoryPage() {
  const [weeks, setWeeks] = useState(12);
  const stats = usePoll<JobStats>(`/stats?weeks=${weeks}`, SLOW_MS);
  const jobs = usePoll<Job[]>('/jobs', SLOW_MS);
  const s = stats.data;
  return (
    <>
      <Section
        title={t('nav.history')}
        stale={stats.stale}
        error={stats.error}
        actions={
          <Select id="h-weeks" label={t('history.period')} value={String(weeks)} options={PERIODS.map(String)} text={(o) => t('history.periodWeeks', { n: o })} onChange={(v) => setWeeks(Number(v))} />
        }
      >
        {!s ? (
          <p class="muted">{stats.error ?? t('common.loading')}</p>
        ) : (
          <div class="stats-grid">
            <div class="stats-box">
              <h2>{t('history.perWeek')}</h2>
              <WeekChart weeks={s.per_week} />
            </div>
            <div class="stats-box">
              <h2>{t('history.space')}</h2>
              <Space space={s.space} />
            </div>
            <div class="stats-box">
              <h2>{t('history.timePerKind')}</h2>
              <KindTimes kinds={s.per_kind} />
            </div>
            <div class="stats-box">
              <h2>{t('history.failures')}</h2>
              <Failures failures={s.failures} />
            </div>
          </div>
        )}
      </Section>
      <Section title={t('history.list')} stale={jobs.stale} error={jobs.error}>
        {jobs.data ? <HistoryList jobs={jobs.data} /> : <p class="muted">{jobs.error ?? t('common.loading')}</p>}
      </Section>
    </>
  );
}
