import { Empty, Section } from '../components.js';
import { bytes } from '../format.js';
import { SLOW_MS, usePoll } from '../poll.js';

interface DiskInfo {
  name: string;
  path: string;
  total_bytes: number | null;
  free_bytes: number | null;
  warnung: string | null;
}

interface Mount {
  name: string;
  protocol?: string;
  mounted?: boolean;
  reachable?: boolean;
  warnung?: string | null;
}

export function StoragePage() {
  const info = usePoll<DiskInfo[]>('/storage-targets', SLOW_MS);
  const mounts = usePoll<Mount[]>('/storage-mounts', SLOW_MS);
  return (
    <>
      <Section title="Speicherziele" stale={info.stale} error={info.error}>
        <table class="table">
          <thead>
            <tr>
              <th>Ziel</th>
              <th>Pfad</th>
              <th>frei</th>
              <th>gesamt</th>
            </tr>
          </thead>
          <tbody>
            {info.data?.map((d) => (
              <tr key={d.name} class={d.warnung ? 'warn' : ''}>
                <td>{d.name}</td>
                <td>{d.path}</td>
                <td>{bytes(d.free_bytes)}</td>
                <td>{bytes(d.total_bytes)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {info.data
          ?.filter((d) => d.warnung)
          .map((d) => (
            <p class="warn" role="alert" key={d.name}>
              Achtung: {d.warnung}
            </p>
          ))}
      </Section>
      <Section title="Netzlaufwerke" stale={mounts.stale} error={mounts.error}>
        {mounts.data === null && mounts.error && <p class="muted">{mounts.error}</p>}
        {mounts.data?.length === 0 && <Empty>Keine Netzlaufwerke eingebunden.</Empty>}
        <ul>
          {mounts.data?.map((m) => (
            <li key={m.name}>
              {m.name} ({m.protocol}): {m.mounted ? 'eingebunden' : 'nicht eingebunden'}, {m.reachable ? 'erreichbar' : 'nicht erreichbar'}
              {m.warnung && <span class="warn"> · {m.warnung}</span>}
            </li>
          ))}
        </ul>
      </Section>
    </>
  );
}
