import path from 'node:path';
import { isUnderRoot } from '../../shared/media-paths.js';

/**
 * Why a series rip may not go to this target folder, or null. Storage targets carry no kind of their
 * own: the quick-pick settings say which folder holds the movies (quickPickMovies) and which the
 * series (quickPickSeries). A series filed into the movies folder or below it ("Filme/Show/Season 01")
 * is found by no media server's series library, so it is refused (issue 38). A movies folder that is
 * the series folder, or lies above it, refuses nothing: the household chose to keep them together.
 */
export function seriesTargetRefusal(mediaRoot: string, quickPick: { movies: string; series: string }, targetDir: string): string | null {
  const movies = path.join(mediaRoot, quickPick.movies);
  const series = path.join(mediaRoot, quickPick.series);
  if (isUnderRoot(movies, series)) return null;
  if (!isUnderRoot(movies, targetDir)) return null;
  return `a series goes to the series folder ${series}, not into the movies folder ${movies}: choose the series folder (or another folder outside the movies) as target_dir`;
}
