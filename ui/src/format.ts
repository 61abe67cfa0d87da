export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return '–';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = n;
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${v.toFixed(v >= 100 || i === 0 ? 0 : 1).replace('.', ',')} ${units[i]}`;
}

export function duration(seconds: number): string {
  const m = Math.floor(seconds / 60);
  const s = Math.round(seconds % 60);
  return m >= 60 ? `${Math.floor(m / 60)} h ${m % 60} min` : `${m}:${String(s).padStart(2, '0')} min`;
}

export function when(iso: string | null | undefined): string {
  if (!iso) return '–';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? '–' : d.toLocaleString('de-DE', { dateStyle: 'short', timeStyle: 'short' });
}

/** The German names of the job statuses. */
export const STATUS_TEXT: Record<string, string> = {
  pending: 'wartet',
  processing: 'rippt',
  running: 'rippt',
  transcoding: 'komprimiert',
  canceling: 'wird abgebrochen',
  completed: 'fertig',
  failed: 'fehlgeschlagen',
  canceled: 'abgebrochen',
};
