import { useEffect, useState } from 'preact/hooks';
import { get, post, type Device, type DeviceTracks, type Job, type ScannedDiscTrack, type Worker } from '../api.js';
import { Dialog } from '../components.js';
import { hasRoles, leftText, mainFeatureText, preselectedTitles, rolePieces } from '../disc-titles.js';
import { bytes, duration } from '../format.js';
import { dateTime, languageName, t, type MessageKey } from '../i18n/index.js';
import { ripRequest, switchSeries } from '../rip-request.js';
import { chosenLanguages, foundLanguages, languageOptions, languageRoles, ripTitles, type LanguageOption, type StreamKind, type StreamRole } from '../stream-languages.js';
import { FolderPicker } from './folders.js';
import { relativeToMedia } from '../media-path.js';
import { opensAsSeries, previousName, startingName, titlesProblem, unreadableText } from '../disc-state.js';

/**
 * Titles of five minutes or more are pre-selected: the features and episodes, not the trailers (a
 * recognised disc: the wanted titles; a movie disc: the main feature, not the titles the rip leaves).
 */
const PRESELECT_SECONDS = 300;

interface Settings {
  quickPickMovies: string;
  quickPickSeries: string;
  quickPickMusic: string;
  mainFeatureOnly: boolean;
  workDir: string;
  audioLanguages: string[];
  subtitleLanguages: string[];
}

/** One fieldset of language boxes (audio or subtitles) for the languages on the chosen titles. */
function LanguageBoxes({ kind, options, roles, ticked, onToggle }: { kind: StreamKind; options: LanguageOption[]; roles: Map<string, StreamRole[]>; ticked: ReadonlySet<string>; onToggle(code: string): void }) {
  return (
    <fieldset data-testid={`languages-${kind}`}>
      <legend>{t(kind === 'audio' ? 'rip.audioLanguages' : 'rip.subtitleLanguages')}</legend>
      {options.length === 0 && <p class="muted">{t('rip.noLanguages')}</p>}
      {options.map((o) => (
        <label class="check" key={o.code}>
          <input type="checkbox" checked={ticked.has(o.code)} onChange={() => onToggle(o.code)} data-testid={`${kind}-${o.code}`} />
          {languageName(o.code)} <span class="muted">({o.code})</span>
          {(roles.get(o.code) ?? []).length > 0 && (
            <span class="muted" data-testid={`${kind}-${o.code}-roles`}>
              {' · '}
              {(roles.get(o.code) ?? []).map((r) => t(`rip.streamRole.${r}`)).join(', ')}
            </span>
          )}
        </label>
      ))}
    </fieldset>
  );
}

interface SeasonEpisode {
  episode: number;
  name: string | null;
  runtime_minutes: number | null;
}

export function RipDialog({ device, onClose, onStarted }: { device: Device; onClose(): void; onStarted(job: Job): void }) {
  const disc = device.disc!;
  const first = startingName(disc);
  const unreadable = unreadableText(disc);
  const [tracks, setTracks] = useState<ScannedDiscTrack[] | null>(null);
  const [scanError, setScanError] = useState<string | null>(null);
  const [chosen, setChosen] = useState<Set<number>>(new Set());
  const [mainOnly, setMainOnly] = useState<boolean | null>(null);
  const [settings, setSettings] = useState<Settings | null>(null);
  const [mediaRoot, setMediaRoot] = useState<string | null>(null);
  const [targetDir, setTargetDir] = useState<string>(disc.previous_rip?.target_dir ?? '');
  const [workDir, setWorkDir] = useState('');
  const [node, setNode] = useState('');
  const [workers, setWorkers] = useState<Worker[]>([]);
  const [isSeries, setIsSeries] = useState(opensAsSeries(disc));
  const [series, setSeries] = useState(first.series);
  const [season, setSeason] = useState(first.season);
  const [episodes, setEpisodes] = useState<SeasonEpisode[] | null>(null);
  const [title, setTitle] = useState(first.title);
  const [release, setRelease] = useState('');
  const [year, setYear] = useState(first.year);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const mainFeatureOnly = mainOnly ?? settings?.mainFeatureOnly ?? false;
  // Languages: unticked ones the user took away, ticked ones the user added; the settings tick the rest.
  const [audioChanged, setAudioChanged] = useState<Map<string, boolean>>(new Map());
  const [subsChanged, setSubsChanged] = useState<Map<string, boolean>>(new Map());
  const titlesNow = tracks ? ripTitles(tracks, chosen, mainFeatureOnly) : [];
  const withRoles = tracks ? hasRoles(tracks) : false;
  const mainFeature = tracks && !withRoles ? mainFeatureText(tracks) : null;
  const withStreams = tracks?.some((x) => (x.audio?.length ?? 0) > 0) ?? false;
  const audioOptions = tracks && settings ? languageOptions(foundLanguages(tracks, titlesNow, 'audio'), settings.audioLanguages) : [];
  const subOptions = tracks && settings ? languageOptions(foundLanguages(tracks, titlesNow, 'subtitles'), settings.subtitleLanguages) : [];
  const tickedOf = (options: LanguageOption[], changed: Map<string, boolean>) => new Set(options.filter((o) => changed.get(o.code) ?? o.preferred).map((o) => o.code));
  const audioTicked = tickedOf(audioOptions, audioChanged);
  const subsTicked = tickedOf(subOptions, subsChanged);
  const flip = (changed: Map<string, boolean>, set: (m: Map<string, boolean>) => void, ticked: ReadonlySet<string>) => (code: string) => set(new Map(changed).set(code, !ticked.has(code)));

  useEffect(() => {
    let alive = true;
    void (async () => {
      try {
        const [s, info, caps] = await Promise.all([get<Settings>('/settings'), get<{ disks: { name: string; path: string }[] }>('/system/info'), get<Worker[]>('/capabilities')]);
        if (!alive) return;
        setSettings(s);
        setWorkDir(s.workDir);
        setWorkers(caps.filter((w) => w.online));
        setMediaRoot(info.disks.find((d) => d.name === 'media')?.path ?? null);
      } catch (err) {
        if (alive) setError((err as Error).message);
      }
      if (disc.type === 'cd' || unreadable) return;
      try {
        await post(`/devices/${encodeURIComponent(device.name)}/scan-tracks`);
        for (let i = 0; i < 120 && alive; i++) {
          const r = await get<DeviceTracks>(`/devices/${encodeURIComponent(device.name)}/tracks`);
          if (!r.scanning) {
            if (r.error) setScanError(r.error);
            setTracks(r.tracks);
            // A recognised disc: exactly the titles the rip wants; else the long ones.
            setChosen(new Set(preselectedTitles(r.tracks, PRESELECT_SECONDS)));
            return;
          }
          await new Promise((resolve) => setTimeout(resolve, 1000));
        }
      } catch (err) {
        if (alive) setScanError((err as Error).message);
      }
    })();
    return () => {
      alive = false;
    };
  }, [device.name]);

  const quick: { label: MessageKey; dir: string }[] | null =
    settings && mediaRoot
      ? [
          { label: 'rip.quick.movies', dir: `${mediaRoot}/${settings.quickPickMovies}` },
          { label: 'rip.quick.series', dir: `${mediaRoot}/${settings.quickPickSeries}` },
          { label: 'rip.quick.music', dir: `${mediaRoot}/${settings.quickPickMusic}` },
        ]
      : null;
  useEffect(() => {
    if (quick && !targetDir) setTargetDir(quick[disc.type === 'cd' ? 2 : isSeries ? 1 : 0].dir);
  }, [quick?.[0].dir]);

  useEffect(() => {
    setEpisodes(null);
    if (!isSeries || !disc.tmdb_id || !season) return;
    get<{ episodes: SeasonEpisode[] }>(`/metadata/tv/${disc.tmdb_id}/season/${season}`).then(
      (s) => setEpisodes(s.episodes),
      () => setEpisodes([]),
    );
  }, [isSeries, season, disc.tmdb_id]);

  // "Serie" ticked: the series quick pick and the identified title as the series name (and back when unticked).
  const asSeries = (on: boolean) => {
    const next = switchSeries(on, { series, title, targetDir }, quick ? { movies: quick[0].dir, series: quick[1].dir } : null);
    setIsSeries(on);
    setSeries(next.series);
    setTitle(next.title);
    setTargetDir(next.targetDir);
  };

  const toggle = (n: number) => {
    const next = new Set(chosen);
    if (next.has(n)) next.delete(n);
    else next.add(n);
    setChosen(next);
  };

  // A scan that failed and found no title: nothing on the disc can be ripped (a failure after some titles leaves those).
  const cannotRead = unreadable ?? (scanError && !tracks?.length ? t('rip.cannotRead', { reason: scanError }) : null);
  const problem = disc.type === 'cd' ? null : titlesProblem(tracks, chosen, mainFeatureOnly);
  const allShort = Boolean(tracks?.length) && tracks!.every((x) => x.seconds < PRESELECT_SECONDS) && chosen.size === 0;

  const start = async () => {
    setError(null);
    if (problem) {
      setError(problem);
      return;
    }
    // The server refuses it too (the quick-pick settings say which folder is which).
    const movies = quick?.[0].dir;
    if (disc.type !== 'cd' && isSeries && quick && movies && quick[1].dir !== movies && !quick[1].dir.startsWith(`${movies}/`) && (targetDir === movies || targetDir.startsWith(`${movies}/`))) {
      setError(t('rip.seriesInMovies', { series: relativeToMedia(quick[1].dir, mediaRoot), movies: relativeToMedia(movies, mediaRoot) }));
      return;
    }
    setBusy(true);
    try {
      const body = ripRequest({
        device: device.name,
        mainFeatureOnly: disc.type === 'cd' ? null : mainFeatureOnly,
        titles: tracks ? [...chosen] : null,
        series: disc.type !== 'cd' && isSeries ? { name: series, season, tmdbId: disc.tmdb_id } : null,
        release: disc.type === 'cd' && release ? release : null,
        movie: disc.type !== 'cd' && !isSeries ? { title, year } : null,
        targetDir,
        workDir,
        transcodeNode: node,
        languages: disc.type !== 'cd' && withStreams ? { audio: chosenLanguages(audioOptions, audioTicked), subtitles: chosenLanguages(subOptions, subsTicked) } : null,
      });
      onStarted(await post<Job>('/jobs', body));
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog title={t('rip.title', { title: disc.title })} onClose={onClose}>
      <form
        class="form"
        onSubmit={(e) => {
          e.preventDefault();
          void start();
        }}
      >
        {disc.previous_rip && (
          <p class="warn" data-testid="rip-previous">
            {t('previous.dialog', { when: dateTime(disc.previous_rip.ripped_at), name: previousName(disc.previous_rip) })}
          </p>
        )}
        {disc.type !== 'cd' && (
          <fieldset>
            <legend>{t('rip.titles')}</legend>
            {!tracks && !cannotRead && <p class="muted">{t('rip.reading')}</p>}
            {cannotRead && (
              <p class="error" role="alert" data-testid="rip-unreadable">
                {cannotRead}
              </p>
            )}
            {scanError && !cannotRead && (
              <p class="error" translate={false}>
                {scanError}
              </p>
            )}
            {tracks?.length === 0 && !scanError && (
              <p class="error" role="alert" data-testid="rip-no-titles">
                {t('rip.noTitles')}
              </p>
            )}
            {allShort && (
              <p class="warn" data-testid="rip-all-short">
                {t('rip.allShort')}
              </p>
            )}
            {mainFeature && (
              <p class="muted" data-testid="main-feature">
                {mainFeature}
              </p>
            )}
            {tracks?.map((x) => (
              <label class="check" key={x.number}>
                <input type="checkbox" checked={!mainFeatureOnly && chosen.has(x.number)} disabled={mainFeatureOnly} onChange={() => toggle(x.number)} data-testid={`title-${x.number}`} />
                <span>
                  {t('rip.track', { n: x.number, duration: duration(x.seconds), chapters: x.chapters, size: bytes(x.size_bytes) })}
                  {withRoles && (
                    <span class="track-role" data-testid={`role-${x.number}`}>
                      {rolePieces(x.role, (name) => <span translate={false}>{name}</span>)}
                      {x.in_library && ' '}
                      {x.in_library && <span class="badge">{t('rip.inLibrary')}</span>}
                    </span>
                  )}
                  {!withRoles && x.main_feature && (
                    <span class="track-role" data-testid={`main-${x.number}`}>
                      {t('role.main_movie')}
                    </span>
                  )}
                  {!withRoles && x.left && (
                    <span class="track-role muted" data-testid={`left-${x.number}`}>
                      {leftText(x.left)}
                    </span>
                  )}
                </span>
              </label>
            ))}
            <label class="check">
              <input type="checkbox" checked={mainFeatureOnly} onChange={(e) => setMainOnly((e.target as HTMLInputElement).checked)} data-testid="main-only" />
              {t('rip.mainOnly')}
            </label>
          </fieldset>
        )}
        {disc.type !== 'cd' && withStreams && (
          <div class="columns2">
            <LanguageBoxes kind="audio" options={audioOptions} roles={tracks ? languageRoles(tracks, titlesNow, 'audio') : new Map()} ticked={audioTicked} onToggle={flip(audioChanged, setAudioChanged, audioTicked)} />
            <LanguageBoxes kind="subtitles" options={subOptions} roles={tracks ? languageRoles(tracks, titlesNow, 'subtitles') : new Map()} ticked={subsTicked} onToggle={flip(subsChanged, setSubsChanged, subsTicked)} />
          </div>
        )}
        {disc.type !== 'cd' && (
          <fieldset>
            <legend>{t('rip.name')}</legend>
            <label class="check">
              <input type="checkbox" checked={isSeries} onChange={(e) => asSeries((e.target as HTMLInputElement).checked)} data-testid="is-series" /> {t('rip.isSeries')}
            </label>
            {isSeries ? (
              <div class="grid2">
                <label>
                  {t('rip.series')}
                  <input value={series} onInput={(e) => setSeries((e.target as HTMLInputElement).value)} required data-testid="series-name" />
                </label>
                <label>
                  {t('rip.season')}
                  <input type="number" min={0} max={99} value={season} onInput={(e) => setSeason(Number((e.target as HTMLInputElement).value))} required data-testid="season" />
                </label>
                {episodes && episodes.length > 0 && (
                  <p class="muted wide" data-testid="episodes">
                    {t('rip.episodes', { list: episodes.map((ep) => `${ep.episode}: ${ep.runtime_minutes ?? '?'} min`).join(' · ') })}
                  </p>
                )}
                {!disc.tmdb_id && <p class="muted wide">{t('rip.noTmdb')}</p>}
              </div>
            ) : (
              <div class="grid2">
                <label>
                  {t('rip.movieTitle')}
                  <input value={title} onInput={(e) => setTitle((e.target as HTMLInputElement).value)} />
                </label>
                <label>
                  {t('rip.year')}
                  <input type="number" min={1880} max={2200} value={year} onInput={(e) => setYear((e.target as HTMLInputElement).value)} />
                </label>
              </div>
            )}
          </fieldset>
        )}
        {disc.type === 'cd' && disc.album && (disc.suggestions?.length ?? 0) > 0 && (
          <fieldset>
            <legend>{t('rip.release')}</legend>
            <select value={release} onChange={(e) => setRelease((e.target as HTMLSelectElement).value)} data-testid="cd-release">
              <option value="">
                {disc.album.artist} - {disc.album.album} ({disc.album.year ?? '?'})
              </option>
              {disc.suggestions?.map((r) => (
                <option value={r.release_id} key={r.release_id}>
                  {r.artist} - {r.album} ({[r.year, r.country].filter(Boolean).join(', ') || '?'}){r.exact ? '' : ` · ${t('rip.releaseInexact')}`}
                </option>
              ))}
            </select>
          </fieldset>
        )}
        <fieldset>
          <legend>{t('rip.target')}</legend>
          {quick && (
            <div class="row">
              {quick.map((q) => (
                <button type="button" key={q.label} class={targetDir === q.dir ? 'chosen' : ''} aria-pressed={targetDir === q.dir} onClick={() => setTargetDir(q.dir)} data-testid={`quick-${q.label.slice('rip.quick.'.length)}`}>
                  {t(q.label)}
                </button>
              ))}
            </div>
          )}
          <FolderPicker value={targetDir} onChange={setTargetDir} root={mediaRoot} />
          <label>
            {t('rip.workDir')}
            <input value={workDir} placeholder={t('rip.workDirDefault')} onInput={(e) => setWorkDir((e.target as HTMLInputElement).value)} />
          </label>
          <label>
            {t('rip.transcodeOn')}
            <select value={node} onChange={(e) => setNode((e.target as HTMLSelectElement).value)}>
              <option value="">{t('rip.anyWorker')}</option>
              {workers.map((w) => (
                <option key={w.node} value={w.node}>
                  {w.name} ({w.node})
                </option>
              ))}
            </select>
          </label>
        </fieldset>
        {error && (
          <p class="error" role="alert" translate={false}>
            {error}
          </p>
        )}
        <div class="row">
          <button type="submit" class="primary" disabled={busy || Boolean(cannotRead) || tracks?.length === 0} data-testid="rip-start">
            {t('rip.start')}
          </button>
          <button type="button" onClick={onClose}>
            {t('common.cancel')}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
