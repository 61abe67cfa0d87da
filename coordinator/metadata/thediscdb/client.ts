/**
 * TheDiscDB's public GraphQL API (POST <base>/graphql, no key): the discs whose ContentHash, or else
 * GlobalDiscId, equals the one read from the inserted disc. One filter per query: a null variable in
 * an `eq` filter is not reliably ignored by the server, so the two ids are never sent together.
 */
import { getJson, records, SourceError } from '../match.js';
import { RateLimiter } from '../rate-limiter.js';
import { parseDisc, parseMediaItem, parseRelease, type TddbEntry } from './types.js';

/** Lookups are rare (a disc inserted); spacing them keeps a burst of drives polite to a volunteer-run site. */
export const THEDISCDB_INTERVAL_MS = 1000;
const TIMEOUT_MS = 10_000;

const TITLE_FIELDS = 'index sourceFile segmentMap duration size item { title type season episode }';

/** The selection: the media item with its external ids, the release, and the matching disc with its titles. */
function discQuery(filter: 'contentHash' | 'globalDiscId'): string {
  const where = `{ ${filter}: { eq: $id } }`;
  return [
    `query DiscBy${filter === 'contentHash' ? 'ContentHash' : 'GlobalDiscId'}($id: String!) {`,
    `  mediaItems(where: { releases: { some: { discs: { some: ${where} } } } }) {`,
    '    nodes {',
    '      title year slug type imageUrl',
    '      externalids { tmdb imdb }',
    `      releases(where: { discs: { some: ${where} } }) {`,
    '        slug title year imageUrl',
    `        discs(where: ${where}, order: { index: ASC }) {`,
    '          index name format contentHash globalDiscId',
    `          titles(order: { index: ASC }) { ${TITLE_FIELDS} }`,
    '        }',
    '      }',
    '    }',
    '  }',
    '}',
  ].join('\n');
}

export const CONTENT_HASH_QUERY = discQuery('contentHash');
export const GLOBAL_DISC_ID_QUERY = discQuery('globalDiscId');
/** The smallest question the server answers: is it there and speaking GraphQL. */
const PING_QUERY = '{ __typename }';

/** Every (media item, release, disc) of a GraphQL answer. */
export function entriesOf(body: unknown): TddbEntry[] {
  const data = (body as { data?: { mediaItems?: { nodes?: unknown } } } | null)?.data;
  const out: TddbEntry[] = [];
  for (const node of records(data?.mediaItems?.nodes)) {
    const mediaItem = parseMediaItem(node);
    if (!mediaItem) continue;
    for (const r of records(node.releases)) {
      const release = parseRelease(r);
      for (const d of records(r.discs)) {
        const disc = parseDisc(d);
        if (disc) out.push({ mediaItem, release, disc });
      }
    }
  }
  return out;
}

export class TheDiscDbClient {
  private readonly limiter: RateLimiter;

  constructor(
    private readonly baseUrl: string,
    limiter?: RateLimiter,
    private readonly timeoutMs = TIMEOUT_MS,
  ) {
    this.limiter = limiter ?? new RateLimiter(THEDISCDB_INTERVAL_MS);
  }

  /** `<base>/images/<imageUrl>`: where TheDiscDB serves its covers. */
  imageUrl(relative: string | null): string | null {
    return relative ? `${this.baseUrl}/images/${relative.replace(/^\/+/, '')}` : null;
  }

  private async query(query: string, variables: Record<string, string>): Promise<unknown> {
    await this.limiter.acquire();
    const body = await getJson('thediscdb', `${this.baseUrl}/graphql`, {}, { method: 'POST', body: { query, variables }, timeoutMs: this.timeoutMs });
    const errors = records((body as { errors?: unknown } | null)?.errors);
    if (errors.length > 0) throw new SourceError('thediscdb', `TheDiscDB refused the query: ${String(errors[0].message ?? 'no reason given')}`);
    return body;
  }

  /** The discs with this ContentHash (32 hex digits). */
  async byContentHash(hash: string): Promise<TddbEntry[]> {
    return entriesOf(await this.query(CONTENT_HASH_QUERY, { id: hash.toUpperCase() }));
  }

  /** The discs with this GlobalDiscId (DVD: 32 hex digits; Blu-ray/UHD: the AACS disc id, 40). */
  async byGlobalDiscId(id: string): Promise<TddbEntry[]> {
    return entriesOf(await this.query(GLOBAL_DISC_ID_QUERY, { id: id.toUpperCase() }));
  }

  /** For GET /metadata/status: answers when the API is reachable and speaks GraphQL. */
  async check(): Promise<void> {
    await this.query(PING_QUERY, {});
  }
}
