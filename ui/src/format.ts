import { number, tKnown } from './i18n/index.js';

export { dateTime as when } from './i18n/index.js';

/** Bytes in decimal units with the locale's decimal sign: "4,7 GB" / "4.7 GB". */
export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return '–';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = n;
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${number(v, v >= 100 || i === 0 ? 0 : 1)} ${units[i]}`;
}

export function duration(seconds: number): string {
  const m = Math.floor(seconds / 60);
  const s = Math.round(seconds % 60);
  return m >= 60 ? `${Math.floor(m / 60)} h ${m % 60} min` : `${m}:${String(s).padStart(2, '0')} min`;
}

/** A job status in words; an unknown status shows as the API writes it. */
export function statusText(status: string): string {
  return tKnown(`status.${status}`) ?? status;
}

/** A disc type in words (DVD, Blu-ray, 4K UHD, audio CD). */
export function discTypeText(type: string): string {
  return tKnown(`disc.${type}`) ?? type;
}

