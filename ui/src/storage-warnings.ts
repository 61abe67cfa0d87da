/**
 * The storage page's target names and warnings in the UI's language (pure; the unit test reads it):
 * the server sends numbers and a warning flag, the words are made here.
 */
import type { StorageTarget } from './api.js';
import { bytes } from './format.js';
import { lang, t, tKnown } from './i18n/index.js';

/** A storage target's name as the household reads it: "Filme", "Netzlaufwerk nas". */
export function targetName(name: string): string {
  return name.startsWith('mount:') ? t('storage.networkDrive', { name: name.slice(6) }) : (tKnown(`storage.target.${name}`) ?? name);
}

/**
 * The targets with a warning, those with the same free space together: the media folder and its quick-pick
 * folders usually lie on one disk, and four equal warnings one below the other read as four problems.
 */
export function warningGroups(targets: StorageTarget[]): StorageTarget[][] {
  const groups = new Map<string, StorageTarget[]>();
  for (const d of targets.filter((x) => x.warning)) {
    const key = d.free_bytes === null ? `down:${d.name}` : `free:${bytes(d.free_bytes)}`;
    groups.set(key, [...(groups.get(key) ?? []), d]);
  }
  return [...groups.values()];
}

/** A warning in the UI's language, for one target or several with the same free space: little space left (the server warns under 60 GB), or a share that is not there. */
export function storageWarning(group: StorageTarget[]): string {
  const [d] = group;
  if (d.free_bytes === null) return t(d.name.startsWith('mount:') ? 'storage.mountDown' : 'storage.shareDown', { name: targetName(d.name) });
  if (group.length === 1) return t('storage.lowSpace', { name: targetName(d.name), free: bytes(d.free_bytes) });
  return t('storage.lowSpaceMany', { names: new Intl.ListFormat(lang(), { type: 'conjunction' }).format(group.map((x) => targetName(x.name))), free: bytes(d.free_bytes) });
}

