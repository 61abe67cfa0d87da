import { useEffect, useState } from 'preact/hooks';
import { get, post, posterSrc, type Device, type Job, type Track, type Worker } from '../api.js';
import { Action, Dialog, Empty, Section } from '../components.js';
import { bytes, duration } from '../format.js';
import { FAST_MS, SLOW_MS, usePoll } from '../poll.js';
import { FolderPicker } from './folders.js';

/** Titles of five minutes or more are pre-selected: the features and episodes, not the trailers. */
const PRESELECT_SECONDS = 300;

const TYPE_TEXT: Record<string, string> = { dvd: 'DVD', bluray: 'Blu-ray', uhd: '4K UHD', cd: 'Audio-CD', unknown: 'unbekannt' };

interface Settings {
  quickPickMovies: string;
  quickPickSeries: string;
  quickPickMusic: string;
  mainFeatureOnly: boolean;
  workDir: string;
}

interface SeasonEpisode {
  episode: number;
  name: string | null;
  runtime_minutes: number | null;
}

/** The latest job of a drive whose rip is done: the disc may come out while the transcode runs. */
function ripDone(device: Device, jobs: Job[]): Job | undefined {
  return jobs.find((j) => j.device === device.name && j.meta?.rip_fertig === true && j.meta?.fingerprint === device.disc?.fingerprint && ['transcoding', 'completed', 'canceling'].includes(j.status));
}

/** Where an audio CD's names come from, for the disc card. */
const ALBUM_SOURCE: Record<string, string> = { musicbrainz: 'MusicBrainz', 'cd-text': 'CD-Text', none: 'unbekannt' };

function DriveCard({ device, jobs, onRip }: { device: Device; jobs: Job[]; onRip(d: Device): void }) {
  const disc = device.disc;
  const done = ripDone(device, jobs);
  const src = posterSrc(disc?.poster ?? null);
  return (
    <article class="card drive" data-testid={`drive-${device.name}`}>
      {src ? <img class="poster" src={src} alt="" loading="lazy" /> : <div class="poster none" aria-hidden="true" />}
      <div class="card-body">
        <h3>{device.name}</h3>
        <p class="muted">
          {[device.vendor, device.model].filter(Boolean).join(' ') || 'Laufwerk'} · {device.worker ?? device.node}
          {!device.worker_online && <strong class="warn"> · Worker offline</strong>}
        </p>
        {disc ? (
          <div class="disc">
            <p class="disc-title" data-testid="disc-title">
              {disc.title}
              {disc.year ? ` (${disc.year})` : ''}
            </p>
            <p class="muted">
              {TYPE_TEXT[disc.type] ?? disc.type} · {bytes(disc.size_bytes)}
              {disc.confidence !== null && ` · Sicherheit ${Math.round(disc.confidence * 100)} %`}
              {disc.audio_tracks ? ` · ${disc.audio_tracks} Titel` : ''}
              {disc.album && ` · ${ALBUM_SOURCE[disc.album.source] ?? disc.album.source}`}
              {disc.suggestions?.length ? ` · ${disc.suggestions.length} weitere Ausgabe${disc.suggestions.length > 1 ? 'n' : ''}` : ''}
            </p>
            {disc.already_ripped && <p class="badge">schon gerippt</p>}
          </div>
        ) : (
          <p class="muted">{device.status === 'tray_open' ? 'Schublade offen' : 'keine Disc'}</p>
        )}
        {done && (
          <p class="ok" role="status" data-testid="rip-done">
            Rip fertig: Disc kann entnommen werden, die nächste kann rein.
          </p>
        )}
        {device.busy_job && <p class="muted">rippt gerade (Auftrag {device.busy_job.slice(0, 8)})</p>}
        <div class="row">
          <button type="button" class="primary" disabled={!disc || Boolean(device.busy_job) || !device.worker_online} onClick={() => onRip(device)} data-testid="rip-open">
            Rippen …
          </button>
          <Action label="Auswerfen" disabled={!disc || Boolean(device.busy_job)} run={() => post(`/devices/${encodeURIComponent(device.name)}/eject`)} />
        </div>
      </div>
    </article>
  );
}

function RipDialog({ device, onClose, onStarted }: { device: Device; onClose(): void; onStarted(job: Job): void }) {
  const disc = device.disc!;
  const [tracks, setTracks] = useState<Track[] | null>(null);
  const [scanError, setScanError] = useState<string | null>(null);
  const [chosen, setChosen] = useState<Set<number>>(new Set());
  const [mainOnly, setMainOnly] = useState<boolean | null>(null);
  const [settings, setSettings] = useState<Settings | null>(null);
  const [mediaRoot, setMediaRoot] = useState<string | null>(null);
  const [targetDir, setTargetDir] = useState<string>('');
  const [workDir, setWorkDir] = useState('');
  const [node, setNode] = useState('');
  const [workers, setWorkers] = useState<Worker[]>([]);
  const [isSeries, setIsSeries] = useState(disc.kind === 'series');
  const [series, setSeries] = useState(disc.kind === 'series' ? disc.title : '');
  const [season, setSeason] = useState(disc.season ?? 1);
  const [episodes, setEpisodes] = useState<SeasonEpisode[] | null>(null);
  const [title, setTitle] = useState(disc.title);
  const [release, setRelease] = useState('');
  const [year, setYear] = useState(disc.year ? String(disc.year) : '');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    let alive = true;
    void (async () => {
      try {
        const [s, info, caps] = await Promise.all([get<Settings>('/settings'), get<{ disks: { name: string; path: string }[] }>('/system/info'), get<Worker[]>('/capabilities')]);
        if (!alive) return;
        setSettings(s);
        setMainOnly(null);
        setWorkDir(s.workDir);
        setWorkers(caps.filter((w) => w.online));
        setMediaRoot(info.disks.find((d) => d.name === 'media')?.path ?? null);
      } catch (err) {
        if (alive) setError((err as Error).message);
      }
      if (disc.type === 'cd') return;
      try {
        await post(`/devices/${encodeURIComponent(device.name)}/scan-tracks`);
        for (let i = 0; i < 120 && alive; i++) {
          const t = await get<{ scanning: boolean; error: string | null; tracks: Track[] }>(`/devices/${encodeURIComponent(device.name)}/tracks`);
          if (!t.scanning) {
            if (t.error) setScanError(t.error);
            setTracks(t.tracks);
            setChosen(new Set(t.tracks.filter((x) => x.seconds >= PRESELECT_SECONDS).map((x) => x.number)));
            return;
          }
          await new Promise((r) => setTimeout(r, 1000));
        }
      } catch (err) {
        if (alive) setScanError((err as Error).message);
      }
    })();
    return () => {
      alive = false;
    };
  }, [device.name]);

  const quick = settings && mediaRoot ? { Filme: `${mediaRoot}/${settings.quickPickMovies}`, Serien: `${mediaRoot}/${settings.quickPickSeries}`, Musik: `${mediaRoot}/${settings.quickPickMusic}` } : null;
  useEffect(() => {
    if (quick && !targetDir) setTargetDir(disc.type === 'cd' ? quick.Musik : isSeries ? quick.Serien : quick.Filme);
  }, [quick?.Filme]);

  useEffect(() => {
    setEpisodes(null);
    if (!isSeries || !disc.tmdb_id || !season) return;
    get<{ episodes: SeasonEpisode[] }>(`/metadata/tv/${disc.tmdb_id}/season/${season}`).then(
      (s) => setEpisodes(s.episodes),
      () => setEpisodes([]),
    );
  }, [isSeries, season, disc.tmdb_id]);

  const toggle = (n: number) => {
    const next = new Set(chosen);
    if (next.has(n)) next.delete(n);
    else next.add(n);
    setChosen(next);
  };

  const start = async () => {
    setBusy(true);
    setError(null);
    try {
      const body: Record<string, unknown> = { device: device.name, target_dir: targetDir || undefined, work_dir: workDir || undefined, transcode_node: node || undefined };
      if (mainOnly === true) body.main_feature_only = true;
      else {
        if (mainOnly === false) body.main_feature_only = false;
        if (tracks && chosen.size) body.titles = [...chosen].sort((a, b) => a - b);
      }
      if (isSeries) {
        body.series = series.trim();
        body.season = season;
        if (disc.tmdb_id) body.tmdb_id = disc.tmdb_id;
      } else if (disc.type === 'cd' && release) {
        body.musicbrainz_release_id = release;
      } else {
        body.title = title.trim() || undefined;
        if (year) body.year = Number(year);
      }
      const job = await post<Job>('/jobs', body);
      onStarted(job);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog title={`Rippen: ${disc.title}`} onClose={onClose}>
      <form
        class="form"
        onSubmit={(e) => {
          e.preventDefault();
          void start();
        }}
      >
        {disc.type !== 'cd' && (
          <fieldset>
            <legend>Titel</legend>
            {!tracks && !scanError && <p class="muted">Disc wird gelesen …</p>}
            {scanError && <p class="error">{scanError}</p>}
            {tracks?.map((t) => (
              <label class="check" key={t.number}>
                <input type="checkbox" checked={chosen.has(t.number)} disabled={mainOnly === true} onChange={() => toggle(t.number)} data-testid={`title-${t.number}`} />
                Titel {t.number}: {duration(t.seconds)}, {t.chapters} Kapitel, {bytes(t.size_bytes)}
              </label>
            ))}
            <label class="check">
              <input type="checkbox" checked={mainOnly ?? settings?.mainFeatureOnly ?? false} onChange={(e) => setMainOnly((e.target as HTMLInputElement).checked)} />
              Nur den Hauptfilm (längster Titel)
            </label>
          </fieldset>
        )}
        {disc.type !== 'cd' && (
          <fieldset>
            <legend>Name</legend>
            <label class="check">
              <input type="checkbox" checked={isSeries} onChange={(e) => setIsSeries((e.target as HTMLInputElement).checked)} /> Serie
            </label>
            {isSeries ? (
              <div class="grid2">
                <label>
                  Serie
                  <input value={series} onInput={(e) => setSeries((e.target as HTMLInputElement).value)} required />
                </label>
                <label>
                  Staffel
                  <input type="number" min={0} max={99} value={season} onInput={(e) => setSeason(Number((e.target as HTMLInputElement).value))} required />
                </label>
                {episodes && episodes.length > 0 && (
                  <p class="muted wide" data-testid="episodes">
                    Folgen: {episodes.map((ep) => `${ep.episode}: ${ep.runtime_minutes ?? '?'} min`).join(' · ')}
                  </p>
                )}
                {!disc.tmdb_id && <p class="muted wide">Ohne TMDB-Treffer behalten die Dateien ihre Titelnummern.</p>}
              </div>
            ) : (
              <div class="grid2">
                <label>
                  Titel
                  <input value={title} onInput={(e) => setTitle((e.target as HTMLInputElement).value)} />
                </label>
                <label>
                  Jahr
                  <input type="number" min={1880} max={2200} value={year} onInput={(e) => setYear((e.target as HTMLInputElement).value)} />
                </label>
              </div>
            )}
          </fieldset>
        )}
        {disc.type === 'cd' && disc.album && (disc.suggestions?.length ?? 0) > 0 && (
          <fieldset>
            <legend>Ausgabe</legend>
            <select value={release} onChange={(e) => setRelease((e.target as HTMLSelectElement).value)} data-testid="cd-release">
              <option value="">
                {disc.album.artist} - {disc.album.album} ({disc.album.year ?? '?'})
              </option>
              {disc.suggestions?.map((r) => (
                <option value={r.release_id} key={r.release_id}>
                  {r.artist} - {r.album} ({[r.year, r.country].filter(Boolean).join(', ') || '?'}){r.exact ? '' : ' · Inhaltsverzeichnis nur ähnlich'}
                </option>
              ))}
            </select>
          </fieldset>
        )}
        <fieldset>
          <legend>Ziel</legend>
          {quick && (
            <div class="row">
              {Object.entries(quick).map(([name, dir]) => (
                <button type="button" key={name} class={targetDir === dir ? 'chosen' : ''} onClick={() => setTargetDir(dir)}>
                  {name}
                </button>
              ))}
            </div>
          )}
          <FolderPicker value={targetDir} onChange={setTargetDir} root={mediaRoot} />
          <label>
            Arbeitsverzeichnis (Rohdaten)
            <input value={workDir} placeholder="Standard" onInput={(e) => setWorkDir((e.target as HTMLInputElement).value)} />
          </label>
          <label>
            Komprimieren auf
            <select value={node} onChange={(e) => setNode((e.target as HTMLSelectElement).value)}>
              <option value="">beliebigem Worker</option>
              {workers.map((w) => (
                <option key={w.node} value={w.node}>
                  {w.name} ({w.node})
                </option>
              ))}
            </select>
          </label>
        </fieldset>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <div class="row">
          <button type="submit" class="primary" disabled={busy} data-testid="rip-start">
            Rip starten
          </button>
          <button type="button" onClick={onClose}>
            Abbrechen
          </button>
        </div>
      </form>
    </Dialog>
  );
}

export function DrivesPage() {
  const devices = usePoll<Device[]>('/devices', FAST_MS);
  const jobs = usePoll<Job[]>('/jobs', FAST_MS);
  const workers = usePoll<Worker[]>('/capabilities', SLOW_MS);
  const [ripping, setRipping] = useState<Device | null>(null);
  const [started, setStarted] = useState<Job | null>(null);
  return (
    <Section title="Laufwerke" stale={devices.stale} error={devices.error}>
      {started && (
        <p class="ok" role="status">
          Auftrag für „{started.title}“ gestartet. <a href="#/auftraege">Zu den Aufträgen</a>
        </p>
      )}
      {devices.data === null && !devices.stale && <p class="muted">lädt …</p>}
      {devices.data?.length === 0 && <Empty>Kein Laufwerk gefunden. {workers.data?.length ? 'Die Worker melden keine Laufwerke.' : 'Es ist noch kein Worker verbunden.'}</Empty>}
      <div class="cards">
        {devices.data?.map((d) => (
          <DriveCard key={d.name} device={d} jobs={jobs.data ?? []} onRip={setRipping} />
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
