/** One drive's column of /proc/sys/dev/cdrom/info (cdrom.c): speed, slots and capability bits. */
export interface ProcCdromDrive {
  name: string;
  /** x-factor. */
  speed: number | null;
  slots: number | null;
  canCloseTray: boolean;
  canOpenTray: boolean;
  canLockTray: boolean;
  canChangeSpeed: boolean;
  canSelectDisk: boolean;
  canReadMultisession: boolean;
  canReadMcn: boolean;
  reportsMediaChanged: boolean;
  canPlayAudio: boolean;
  canWriteCdR: boolean;
  canWriteCdRw: boolean;
  canReadDvd: boolean;
  canWriteDvdR: boolean;
  canWriteDvdRam: boolean;
  canReadMrw: boolean;
  canWriteMrw: boolean;
  canWriteRam: boolean;
}

type Flag = Exclude<keyof ProcCdromDrive, 'name' | 'speed' | 'slots'>;

const FLAGS: Record<string, Flag> = {
  'Can close tray': 'canCloseTray',
  'Can open tray': 'canOpenTray',
  'Can lock tray': 'canLockTray',
  'Can change speed': 'canChangeSpeed',
  'Can select disk': 'canSelectDisk',
  'Can read multisession': 'canReadMultisession',
  'Can read MCN': 'canReadMcn',
  'Reports media changed': 'reportsMediaChanged',
  'Can play audio': 'canPlayAudio',
  'Can write CD-R': 'canWriteCdR',
  'Can write CD-RW': 'canWriteCdRw',
  'Can read DVD': 'canReadDvd',
  'Can write DVD-R': 'canWriteDvdR',
  'Can write DVD-RAM': 'canWriteDvdRam',
  'Can read MRW': 'canReadMrw',
  'Can write MRW': 'canWriteMrw',
  'Can write RAM': 'canWriteRam',
};

function number(value: string | undefined): number | null {
  const n = Number(value);
  return value !== undefined && value !== '' && Number.isFinite(n) ? n : null;
}

/**
 * The drives in /proc/sys/dev/cdrom/info: each row is "field:" followed by one tab-separated
 * column per drive (newest-registered drive first). Unknown rows are ignored.
 */
export function parseProcCdromInfo(text: string): ProcCdromDrive[] {
  const rows = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const values = line
      .slice(colon + 1)
      .split('\t')
      .map((v) => v.trim())
      .filter(Boolean);
    rows.set(line.slice(0, colon).trim(), values);
  }
  const names = rows.get('drive name') ?? [];
  return names.map((name, i) => {
    const drive: ProcCdromDrive = {
      name,
      speed: number(rows.get('drive speed')?.[i]),
      slots: number(rows.get('drive # of slots')?.[i]),
      canCloseTray: false,
      canOpenTray: false,
      canLockTray: false,
      canChangeSpeed: false,
      canSelectDisk: false,
      canReadMultisession: false,
      canReadMcn: false,
      reportsMediaChanged: false,
      canPlayAudio: false,
      canWriteCdR: false,
      canWriteCdRw: false,
      canReadDvd: false,
      canWriteDvdR: false,
      canWriteDvdRam: false,
      canReadMrw: false,
      canWriteMrw: false,
      canWriteRam: false,
    };
    for (const [field, key] of Object.entries(FLAGS)) drive[key] = rows.get(field)?.[i] === '1';
    return drive;
  });
}
