import { useEffect, useState } from 'preact/hooks';
import { get, post, posterSrc, type Device, type Job, type ScoredMatch, type SearchAnswer, type SourceStatus } from '../api.js';
import { Empty, Section } from '../components.js';
import { t, tCount } from '../i18n/index.js';
import { FAST_MS, SLOW_MS, usePoll } from '../poll.js';

function sourceText(source: string): string {
  return source === 'tmdb' ? 'TMDB' : source === 'omdb' ? 'OMDb' : source === 'jikan' ? t('meta.jikan') : source === 'thediscdb' ? 'TheDiscDB' : source;
}

export function MetadataPage() {
  const devices = usePoll<Device[]>('/devices', FAST_MS);
  const status = usePoll<{ ok: boolean; sources: SourceStatus[] }>('/metadata/status', SLOW_MS * 5);
  const [query, setQuery] = useState('');
  const [results, setResults] = useState<ScoredMatch[] | null>(null);
  const [errors, setErrors] = useState<{ source: string; message: string }[]>([]);
  const [searchError, setSearchError] = useState<string | null>(null);
  const [target, setTarget] = useState('');
  const [message, setMessage] = useState<string | null>(null);
  const withDisc = (devices.data ?? []).filter((d) => d.disc);
  // A finished job to correct comes in the address (#/metadaten/job/<id>, the jobs page's button).
  const jobId = /^#\/metadaten\/job\/([\w-]+)$/.exec(location.hash)?.[1] ?? null;
  const [job, setJob] = useState<Job | null>(null);
  useEffect(() => {
    if (!jobId) return;
    get<Job>(`/jobs/${jobId}`).then(
      (j) => {
        setJob(j);
        setQuery((q) => q || j.title);
        setTarget(`job:${j.id}`);
      },
      (err: Error) => setMessage(err.message),
    );
  }, [jobId]);
  const chosenTarget = target || withDisc[0]?.name || '';
  // A correction typed by hand: no lookup service needed (offline, or a title no database knows).
  const [manual, setManualFields] = useState<{ title: string; year: string; series: boolean; season: string }>({ title: '', year: '', series: false, season: '1' });
  // What the user typed is never overwritten by the job's name arriving later.
  const [typed, setTyped] = useState(false);
  const setManual = (m: typeof manual) => {
    setTyped(true);
    setManualFields(m);
  };
  useEffect(() => {
    if (job && !typed) setManualFields({ title: job.meta?.series ?? job.title, year: job.meta?.year ? String(job.meta.year) : '', series: Boolean(job.meta?.series), season: String(job.meta?.season ?? 1) });
  }, [job?.id]);

  const search = async () => {
    setSearchError(null);
    setMessage(null);
    try {
      const r = await get<SearchAnswer>(`/metadata/search?q=${encodeURIComponent(query)}`);
      setResults(r.results);
      setErrors(r.errors);
    } catch (err) {
      setSearchError((err as Error).message);
    }
  };

  const correct = async (fields: Record<string, unknown>) => {
    setMessage(null);
    try {
      const forJob = chosenTarget.startsWith('job:') ? chosenTarget.slice(4) : null;
      const r = await post<{ identity: { title: string }; jobs: string[]; renamed: { to: string } | null }>('/metadata/override', { ...(forJob ? { job_id: forJob } : { device: chosenTarget }), ...fields });
      // The job's new name shows in the target list at once.
      if (forJob) get<Job>(`/jobs/${forJob}`).then(setJob, () => undefined);
      if (r.renamed) setMessage(t('meta.corrected', { title: r.identity.title, path: r.renamed.to }));
      else setMessage(r.jobs.length ? tCount('meta.appliedJobs', r.jobs.length, { title: r.identity.title, device: chosenTarget }) : t('meta.applied', { title: r.identity.title, device: chosenTarget }));
      devices.refresh();
    } catch (err) {
      setMessage((err as Error).message);
    }
  };
  const pick = (m: ScoredMatch) =>
    correct({ source: m.source, id: m.id, title: m.title, year: m.year, kind: m.kind, poster_path: m.poster_path, overview: m.overview, tmdb_id: m.tmdb_id ?? undefined });
  const byHand = () =>
    correct({
      source: 'manual',
      ...(manual.series ? { series: manual.title.trim(), season: Number(manual.season) } : { title: manual.title.trim(), kind: 'movie' }),
      year: manual.year ? Number(manual.year) : undefined,
    });

  return (
    <>
      <Section title={t('meta.connection')} stale={status.stale} error={status.error}>
        <ul class="status-list">
          {status.data?.sources.map((s) => (
            <li key={s.source} class={s.ok ? 'ok' : s.configured ? 'error' : 'muted'} data-testid={`source-${s.source}`}>
              {sourceText(s.source)}: {s.ok ? (s.latency_ms !== null ? t('meta.connectedMs', { ms: s.latency_ms }) : t('meta.connected')) : <span translate={false}>{s.message}</span>}
              {s.auth && ` · ${t('meta.auth', { auth: s.auth })}`}
            </li>
          ))}
        </ul>
      </Section>
      <Section title={t('meta.searchTitle')}>
        <form
          class="row"
          onSubmit={(e) => {
            e.preventDefault();
            void search();
          }}
        >
          <input aria-label={t('meta.query')} placeholder={t('meta.query')} value={query} onInput={(e) => setQuery((e.target as HTMLInputElement).value)} data-testid="meta-query" required />
          <button type="submit" class="primary">
            {t('meta.search')}
          </button>
        </form>
        <label>
          {t('meta.forDisc')}
          <select value={chosenTarget} onChange={(e) => setTarget((e.target as HTMLSelectElement).value)} data-testid="meta-target">
            {job && <option value={`job:${job.id}`}>{t('meta.forJob', { title: job.title })}</option>}
            {withDisc.map((d) => (
              <option key={d.name} value={d.name}>
                {d.name}: {d.disc?.title}
              </option>
            ))}
          </select>
        </label>
        {searchError && (
          <p class="error" translate={false}>
            {searchError}
          </p>
        )}
        {errors.map((e) => (
          <p class="muted" key={e.source} translate={false}>
            {sourceText(e.source)}: {e.message}
          </p>
        ))}
        {message && (
          <p class="ok" role="status">
            {message}
          </p>
        )}
        <form
          class="form manual"
          data-testid="meta-manual"
          onSubmit={(e) => {
            e.preventDefault();
            void byHand();
          }}
        >
          <fieldset>
            <legend>{t('meta.manual')}</legend>
            <p class="muted">{t('meta.manualHelp')}</p>
            <label class="check">
              <input type="checkbox" checked={manual.series} onChange={(e) => setManual({ ...manual, series: (e.target as HTMLInputElement).checked })} data-testid="manual-series" /> {t('meta.series')}
            </label>
            <div class="grid2">
              <label>
                {manual.series ? t('rip.series') : t('rip.movieTitle')}
                <input value={manual.title} maxLength={1000} required onInput={(e) => setManual({ ...manual, title: (e.target as HTMLInputElement).value })} data-testid="manual-title" />
              </label>
              <label>
                {t('rip.year')}
                <input type="number" min={1870} max={2100} value={manual.year} onInput={(e) => setManual({ ...manual, year: (e.target as HTMLInputElement).value })} data-testid="manual-year" />
              </label>
              {manual.series && (
                <label>
                  {t('rip.season')}
                  <input type="number" min={0} max={999} required value={manual.season} onInput={(e) => setManual({ ...manual, season: (e.target as HTMLInputElement).value })} data-testid="manual-season" />
                </label>
              )}
            </div>
            <button type="submit" disabled={!chosenTarget} data-testid="manual-apply">
              {t('meta.manualApply')}
            </button>
          </fieldset>
        </form>
        {results?.length === 0 && <Empty>{t('meta.noHits')}</Empty>}
        <div class="cards">
          {results?.map((m) => {
            const src = posterSrc(m.poster_url ?? m.poster_path);
            return (
              <article class="card match" key={`${m.source}-${m.id}`}>
                {src ? <img class="poster" src={src} alt="" loading="lazy" /> : <div class="poster none" aria-hidden="true" />}
                <div class="card-body">
                  <h3>
                    {m.title}
                    {m.year ? ` (${m.year})` : ''}
                  </h3>
                  <p class="muted">
                    {sourceText(m.source)} · {m.kind === 'series' ? t('meta.series') : t('meta.movie')} · {t('meta.similarity', { n: Math.round(m.similarity * 100) })}
                  </p>
                  {m.overview && (
                    <p class="overview" translate={false}>
                      {m.overview}
                    </p>
                  )}
                  <button type="button" disabled={!chosenTarget} onClick={() => void pick(m)} data-testid="meta-pick">
                    {t('meta.pick')}
                  </button>
                </div>
              </article>
            );
          })}
        </div>
      </Section>
    </>
  );
}
