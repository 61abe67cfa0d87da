/**
 * A drive's box-set session on its card (issue 40): "Heide, Staffel 1: 1 von 3 Discs fertig · Disc 2
 * von 3 einlegen" with the missing and failed discs and a button to end it; without one a small form
 * starts one for this drive ("Staffel 2, 4 Discs"). GET/POST /sessions, docs/api.md#sessions.
 */
import { useState } from 'preact/hooks';
import { post } from '../api.js';
import { Action } from '../components.js';
import { t } from '../i18n/index.js';
import { FAST_MS, usePoll } from '../poll.js';

/** What the card reads of a session of GET /sessions. */
interface SessionSummary {
  id: string;
  kind: 'series' | 'album';
  series: string | null;
  season: number | null;
  disc_total: number | null;
  drive: string | null;
  state: 'open' | 'ended';
  done: number[];
  failed: number[];
  missing: number[];
  next_disc: number | null;
}

function SessionStart({ drive, onStarted }: { drive: string; onStarted(): void }) {
  const [open, setOpen] = useState(false);
  const [series, setSeries] = useState('');
  const [season, setSeason] = useState(1);
  const [discs, setDiscs] = useState(2);
  if (!open) {
    return (
      <button type="button" class="link" onClick={() => setOpen(true)} data-testid="session-open">
        {t('session.start')}
      </button>
    );
  }
  return (
    <form class="session-start" onSubmit={(e) => e.preventDefault()}>
      <label>
        {t('session.series')} <input value={series} onInput={(e) => setSeries((e.target as HTMLInputElement).value)} data-testid="session-series" />
      </label>
      <label>
        {t('session.season')} <input type="number" min={0} max={999} value={season} onInput={(e) => setSeason(Number((e.target as HTMLInputElement).value))} />
      </label>
      <label>
        {t('session.discs')} <input type="number" min={2} max={99} value={discs} onInput={(e) => setDiscs(Number((e.target as HTMLInputElement).value))} data-testid="session-discs" />
      </label>
      <Action
        label={t('session.startNow', { season, discs })}
        kind="primary"
        testId="session-start"
        run={async () => {
          await post('/sessions', { drive, series: series.trim(), season, discs, kind: 'series' });
          setOpen(false);
          onStarted();
        }}
      />
    </form>
  );
}

/** The open session of a drive (one started for it, else one for any drive), or the form to start one. */
export function SessionLine({ drive }: { drive: string }) {
  const sessions = usePoll<SessionSummary[]>('/sessions', FAST_MS);
  const open = sessions.data?.filter((s) => s.state === 'open') ?? [];
  const s = open.find((x) => x.drive === drive) ?? open.find((x) => x.drive === null);
  if (!sessions.data) return null;
  if (!s) return <SessionStart drive={drive} onStarted={() => sessions.refresh()} />;
  const name = s.kind === 'album' ? (s.series ?? t('session.album')) : t('session.seriesName', { series: s.series ?? '', season: s.season ?? 0 });
  const total = s.disc_total ?? '?';
  return (
    <div class="session" data-testid="session">
      <p>
        <strong>{name}</strong>: {t('session.progress', { done: s.done.length, total })}
        {s.next_disc !== null && (
          <strong class="ok" role="status" data-testid="session-next">
            {' · '}
            {s.disc_total !== null ? t('session.insert', { n: s.next_disc, total: s.disc_total }) : t('session.insertNext', { n: s.next_disc })}
          </strong>
        )}
      </p>
      {(s.missing.length > 0 || s.failed.length > 0) && (
        <p class="muted" data-testid="session-missing">
          {[s.missing.length ? t('session.missing', { list: s.missing.join(', ') }) : '', s.failed.length ? t('session.failed', { list: s.failed.join(', ') }) : ''].filter(Boolean).join(' · ')}
        </p>
      )}
      <Action label={t('session.end')} testId="session-end" run={async () => { await post(`/sessions/${encodeURIComponent(s.id)}/end`); sessions.refresh(); }} />
    </div>
  );
}
