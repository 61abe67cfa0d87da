import type { Logger } from '../../shared/log.js';
import type { DiscInfo } from '../../shared/protocol.js';
import type { DiscIdentity, DiscLookup } from './disc-identity.js';
import type { SettingsStore } from '../system/settings-store.js';
import { albumFromRelease, albumTitle, fallbackAlbum, rankReleases, suggestionOf } from './album-choice.js';
import type { MusicBrainzClient, MbRelease } from './musicbrainz.js';
import type { MusicBrainzCache } from './musicbrainz-cache.js';

/** Confidence of a release found by the disc id itself, and of one whose TOC is only close. */
export const EXACT_DISC_CONFIDENCE = 1;
export const CLOSE_TOC_CONFIDENCE = 0.7;

/**
 * Names audio CDs: MusicBrainz by the disc id the agent computed (answers cached in SQLite), the best
 * release by rankReleases with the setting musicCountry, the others as suggestions; without an
 * answer the CD-Text, then "Unbekannter Interpret" / "Audio-CD <disc id>".
 */
export class MusicLookup implements DiscLookup {
  constructor(
    private readonly client: MusicBrainzClient,
    private readonly cache: MusicBrainzCache,
    private readonly settings: Pick<SettingsStore, 'get'>,
    private readonly coverArtBaseUrl: string,
    private readonly log: Logger,
  ) {}

  async identify(disc: DiscInfo, label: DiscIdentity): Promise<DiscIdentity> {
    const cd = disc.audio_cd;
    // A TOC libdiscid refuses has no disc id: nothing to ask MusicBrainz.
    if (cd?.musicbrainz_disc_id && cd.toc) {
      const discId = cd.musicbrainz_disc_id;
      const releases = await this.releases(discId, cd.toc);
      const ranked = releases ? rankReleases(releases, discId, cd.toc, this.settings.get('musicCountry')) : [];
      const best = ranked[0];
      if (best) {
        const album = albumFromRelease(best, this.coverArtBaseUrl, discId);
        this.log.info(`audio CD ${cd.musicbrainz_disc_id}: "${albumTitle(album)}" (${album.year ?? 'no year'}, release ${album.release_id}${best.exact ? '' : ', TOC close but not exact'})${ranked.length > 1 ? `; ${ranked.length - 1} other release(s) as suggestions` : ''}`);
        return {
          ...label,
          title: albumTitle(album),
          year: album.year,
          confidence: best.exact ? EXACT_DISC_CONFIDENCE : CLOSE_TOC_CONFIDENCE,
          poster: album.cover_url,
          kind: 'music',
          source: 'musicbrainz',
          source_id: album.release_id,
          album,
          suggestions: ranked.slice(1).map(suggestionOf),
          alternatives: ranked.slice(1).map((c) => albumFromRelease(c, this.coverArtBaseUrl, discId)),
        };
      }
    }
    const album = fallbackAlbum(disc);
    this.log.info(`audio CD ${cd?.musicbrainz_disc_id ?? disc.fingerprint}: no MusicBrainz release; named ${album.source === 'cd-text' ? 'from its CD-Text' : 'as unknown'}: "${albumTitle(album)}"`);
    return { ...label, title: albumTitle(album), year: null, confidence: 0, poster: null, kind: 'music', source: album.source === 'cd-text' ? 'cd-text' : 'none', album, suggestions: [], alternatives: [] };
  }

  /** Cached answer, else one request; null when MusicBrainz could not answer (logged, not cached). */
  private async releases(discId: string, toc: string): Promise<MbRelease[] | null> {
    const cached = this.cache.get(discId);
    if (cached) return cached;
    try {
      const releases = await this.client.discReleases(discId, toc);
      this.cache.put(discId, releases);
      return releases;
    } catch (err) {
      this.log.warn(`MusicBrainz lookup of ${discId} failed: ${(err as Error).message}; falling back to the CD-Text`);
      return null;
    }
  }
}

/** The pre-scan's lookup: audio CDs go to MusicBrainz, every other disc to the metadata chain. */
export function discLookup(chain: DiscLookup, music: DiscLookup): DiscLookup {
  return { identify: (disc, label) => (label.kind === 'music' ? music.identify(disc, label) : chain.identify(disc, label)) };
}
