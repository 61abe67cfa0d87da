/** What the rip dialog's fields hold; ripRequest turns it into the body of POST /jobs (pure: the unit test reads it). */
export interface RipChoice {
  device: string;
  /** Main feature only as it applies: the user's tick, else the setting; null where titles are not chosen (audio CDs). */
  mainFeatureOnly: boolean | null;
  /** The ticked titles; null while the title scan has not answered (the backend then chooses). */
  titles: number[] | null;
  series: { name: string; season: number; tmdbId: number | null } | null;
  /** Audio CDs: another MusicBrainz release than the one the disc card names; null keeps that one. */
  release: string | null;
  movie: { title: string; year: string } | null;
  targetDir: string;
  workDir: string;
  transcodeNode: string;
  /** The ticked languages; null while no title scan listed streams (the settings' lists then apply). */
  languages: { audio: string[]; subtitles: string[] } | null;
}

/** The body of POST /jobs (docs/api.md): with main feature only the titles are not sent, the backend picks the longest. */
export function ripRequest(c: RipChoice): Record<string, unknown> {
  const body: Record<string, unknown> = { device: c.device, target_dir: c.targetDir || undefined, work_dir: c.workDir || undefined, transcode_node: c.transcodeNode || undefined };
  if (c.mainFeatureOnly !== null) body.main_feature_only = c.mainFeatureOnly;
  if (!c.mainFeatureOnly && c.titles?.length) body.titles = [...c.titles].sort((a, b) => a - b);
  if (c.series) {
    body.series = c.series.name.trim();
    body.season = c.series.season;
    if (c.series.tmdbId) body.tmdb_id = c.series.tmdbId;
  } else if (c.release) {
    body.musicbrainz_release_id = c.release;
  } else if (c.movie) {
    body.title = c.movie.title.trim() || undefined;
    if (c.movie.year) body.year = Number(c.movie.year);
  }
  if (c.languages) {
    body.audio_languages = c.languages.audio;
    body.subtitle_languages = c.languages.subtitles;
  }
  return body;
}

/** The dialog's name and target fields when "Serie" is ticked or unticked. */
export interface SeriesSwitch {
  series: string;
  title: string;
  targetDir: string;
}

/**
 * Ticking "Serie" takes the identified title as the series name (when none is typed) and moves a
 * target on the movies quick pick (or none yet) to the series quick pick; unticking moves it back and
 * takes the series name as the title. A folder the user picked elsewhere stays. Pure: the unit test reads it.
 */
export function switchSeries(asSeries: boolean, now: SeriesSwitch, quick: { movies: string; series: string } | null): SeriesSwitch {
  if (asSeries) {
    return {
      title: now.title,
      series: now.series.trim() ? now.series : now.title,
      targetDir: quick && (!now.targetDir || now.targetDir === quick.movies) ? quick.series : now.targetDir,
    };
  }
  return {
    series: now.series,
    title: now.title.trim() ? now.title : now.series,
    targetDir: quick && (!now.targetDir || now.targetDir === quick.series) ? quick.movies : now.targetDir,
  };
}
