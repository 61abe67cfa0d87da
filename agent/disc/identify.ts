import fs from 'node:fs/promises';
import path from 'node:path';
import type { DiscIds } from '../../shared/protocol.js';
import type { BdmtFile } from './bdmt.js';
import { readDiscIds, type DiscFile } from './disc-ids.js';
import type { DiscReader } from './disc-reader.js';
import { isGenericLabel, titleFromLabel } from './disc-title.js';
import { findEntry, folderTree, type DiscTree } from './disc-tree.js';
import { openIso9660 } from './iso9660.js';
import { openUdf } from './udf.js';

export type DiscLayout = 'dvd' | 'bluray' | 'unknown';

/** Where the raw label came from. */
export type LabelSource = 'udf-lvd' | 'udf-pvd' | 'iso9660' | 'name';

export interface DiscIdentity {
  /** The raw label as read (for the fingerprint): UDF logical volume id, UDF volume id, ISO 9660 volume id, or the file/folder name. */
  label: string;
  labelSource: LabelSource;
  /** Display title: the bdmt clear-text title, else the label made readable (else the file/folder name when the label is generic). */
  title: string;
  /** A trailing 19xx/20xx of the label (or of the file/folder name when the label is generic). */
  year: number | null;
  layout: DiscLayout;
  /** BDMV/index.bdmv starts with INDX0300, the 4K UHD Blu-ray version. */
  uhdMarker: boolean;
  /** discinfo/title/name of BDMV/META/DL/bdmt_*.xml (English preferred), null when absent. */
  bdmtTitle: string | null;
  /** The ids read from the content of a DVD or Blu-ray (disc-ids.ts); null when the layout is unknown. */
  ids: DiscIds | null;
}

export interface VolumeLabels {
  udfLogicalVolumeId?: string | null;
  udfVolumeId?: string | null;
  isoVolumeId?: string | null;
}

/** How many bdmt_*.xml files are read at most. */
const MAX_BDMT_FILES = 32;

/**
 * The raw label: the UDF logical volume id when it only extends the UDF volume id (a dstring[32] holds at
 * most 30 Latin-1 or 15 UTF-16 characters), else the UDF volume id, then the ISO 9660 one; generic labels
 * (DVD_VIDEO, LOGICAL_VOLUME_ID …) only when nothing better is there; else the file/folder name.
 */
export function chooseLabel(labels: VolumeLabels, fallbackName: string): { label: string; labelSource: LabelSource } {
  const lvd = labels.udfLogicalVolumeId?.trim() ?? '';
  const pvd = labels.udfVolumeId?.trim() ?? '';
  const iso = labels.isoVolumeId?.trim() ?? '';
  const udfOrder: [string, LabelSource][] =
    pvd === '' || lvd.startsWith(pvd)
      ? [
          [lvd, 'udf-lvd'],
          [pvd, 'udf-pvd'],
        ]
      : [
          [pvd, 'udf-pvd'],
          [lvd, 'udf-lvd'],
        ];
  const candidates = [...udfOrder, [iso, 'iso9660'] as [string, LabelSource]]
    .filter(([l]) => l !== '')
    .map(([l, labelSource]) => ({ label: l, labelSource }));
  return candidates.find((c) => !isGenericLabel(c.label)) ?? candidates[0] ?? { label: fallbackName, labelSource: 'name' };
}

/** Title and year to show: the bdmt title when there is one; year and fallback title from the label, or from the name when the label is generic. */
export function displayTitle(label: string, bdmtTitle: string | null, fallbackName: string): { title: string; year: number | null } {
  const fromLabel = titleFromLabel(isGenericLabel(label) ? fallbackName : label);
  return { title: bdmtTitle ?? fromLabel.title, year: fromLabel.year };
}

function layoutOf(root: readonly { name: string; isDirectory: boolean }[]): DiscLayout {
  const dirs = root.filter((e) => e.isDirectory);
  if (findEntry(dirs, 'VIDEO_TS')) return 'dvd';
  if (findEntry(dirs, 'BDMV')) return 'bluray';
  return 'unknown';
}

async function readUhdMarker(tree: DiscTree): Promise<boolean> {
  const head = await tree.readFile(['BDMV', 'index.bdmv'], 8).catch(() => null);
  return head?.data.toString('latin1') === 'INDX0300';
}

async function readBdmtTitle(tree: DiscTree): Promise<string | null> {
  const entries = await tree.list(['BDMV', 'META', 'DL']).catch(() => null);
  if (!entries?.length) return null;
  // Loaded on first use: an agent that never sees a Blu-ray does not carry the XML parser.
  const { BDMT_MAX_BYTES, bdmtLanguage, decodeBdmt, pickBdmtTitle } = await import('./bdmt.js');
  const names = entries
    .filter((e) => !e.isDirectory && bdmtLanguage(e.name) !== null)
    .map((e) => e.name)
    .slice(0, MAX_BDMT_FILES);
  const files: BdmtFile[] = [];
  for (const fileName of names) {
    const head = await tree.readFile(['BDMV', 'META', 'DL', fileName], BDMT_MAX_BYTES).catch(() => null);
    if (head && head.size < BDMT_MAX_BYTES) files.push({ fileName, xml: decodeBdmt(head.data) });
  }
  return pickBdmtTitle(files);
}

/**
 * Layout, UHD marker and bdmt title from the first tree that shows a disc layout (trees in order of
 * preference; a later tree only fills what an earlier one could not read). The content ids come from
 * that first tree (on a bridge disc the UDF side, whose names and sizes are the disc's own); `files`
 * is its file list when the caller has walked it already.
 */
export async function inspectTrees(trees: readonly DiscTree[], files?: readonly DiscFile[] | null): Promise<Pick<DiscIdentity, 'layout' | 'uhdMarker' | 'bdmtTitle' | 'ids'>> {
  const found: Pick<DiscIdentity, 'layout' | 'uhdMarker' | 'bdmtTitle' | 'ids'> = { layout: 'unknown', uhdMarker: false, bdmtTitle: null, ids: null };
  for (const tree of trees) {
    const root = await tree.list([]).catch(() => null);
    const layout = root ? layoutOf(root) : 'unknown';
    if (layout === 'unknown' || (found.layout !== 'unknown' && layout !== found.layout)) continue;
    found.layout = layout;
    found.ids ??= await readDiscIds(tree, layout, files);
    if (layout !== 'bluray') break;
    found.uhdMarker ||= await readUhdMarker(tree);
    found.bdmtTitle ??= await readBdmtTitle(tree);
    if (found.bdmtTitle !== null) break;
  }
  return found;
}

/**
 * Identifies the disc behind `reader` (an image file or an optical drive opened read-only): labels from
 * UDF and ISO 9660, layout, UHD marker and bdmt title (through UDF first, else the ISO 9660 side).
 * `sizeBytes` is the medium size (0 when unknown); `fallbackName` stands in for a missing label.
 * Unreadable or foreign content gives layout "unknown" and the fallback name, never an error.
 */
export async function identifyDisc(reader: DiscReader, sizeBytes: number, fallbackName: string): Promise<DiscIdentity> {
  const udf = await openUdf(reader, sizeBytes).catch(() => null);
  const iso = await openIso9660(reader).catch(() => null);
  const { label, labelSource } = chooseLabel({ udfLogicalVolumeId: udf?.logicalVolumeId, udfVolumeId: udf?.volumeId, isoVolumeId: iso?.label }, fallbackName);
  const trees: DiscTree[] = [];
  if (udf) trees.push(udf);
  if (iso) trees.push(iso);
  const content = await inspectTrees(trees);
  return { label, labelSource, ...displayTitle(label, content.bdmtTitle, fallbackName), ...content };
}

/** Identifies a disc image file; its name without the extension stands in for a missing label. */
export async function identifyImageFile(file: string): Promise<DiscIdentity> {
  const fh = await fs.open(file, 'r');
  try {
    const { size } = await fh.stat();
    return await identifyDisc(fh, size, path.basename(file, path.extname(file)));
  } finally {
    await fh.close();
  }
}

/**
 * Identifies a disc folder (a copy holding VIDEO_TS or BDMV): the folder name is the label; bdmt and
 * ids are read from the folder. `files`: its regular files with sizes, when the caller has them.
 */
export async function identifyImageFolder(dir: string, files?: readonly DiscFile[] | null): Promise<DiscIdentity> {
  const label = path.basename(dir);
  const content = await inspectTrees([folderTree(dir)], files);
  return { label, labelSource: 'name', ...displayTitle(label, content.bdmtTitle, label), ...content };
}
