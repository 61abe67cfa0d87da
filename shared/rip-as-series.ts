/**
 * Whether a disc is ripped as a series: a season is known (from the label, "SHOW_S02_D1", or from the
 * metadata) and no source called it a movie. The automatic rip and the rip dialog of the web UI both
 * decide by this rule, so a disc no database knows goes to the same place either way.
 * Pure: the UI bundle imports it.
 */
export function ripsAsSeries(identity: { kind: string | null; season: number | null }): boolean {
  return identity.kind !== null && identity.kind !== 'movie' && identity.season !== null;
}
