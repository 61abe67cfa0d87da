import { useState } from 'preact/hooks';
import { API, post, request } from '../api.js';
import { Action, Section } from '../components.js';
import { bytes, when } from '../format.js';
import { SLOW_MS, usePoll } from '../poll.js';
import { SettingsForm } from './settings-form.js';

interface Info {
  node: string;
  workers: { name: string; online: boolean; tools: Record<string, string | null> }[];
  keys: { keystore: { installed: boolean; schluessel: number; installed_at: string | null }; keydb: { present: boolean; entries: number | null }; ripper_app_key: string };
  webhook: { configured: boolean; kind: string | null; last: { at: string; ok: boolean; message: string } | null };
}
interface Update {
  tool: string;
  installed: string | null;
  latest: string | null;
  update_available: boolean | null;
  error: string | null;
}
interface LogLine {
  ts: string;
  level: string;
  source: string;
  job_id: string | null;
  message: string;
}

function Upload({ label, send }: { label: string; send(file: File): Promise<unknown> }) {
  const [msg, setMsg] = useState<{ ok: boolean; text: string } | null>(null);
  return (
    <label>
      {label}
      <input
        type="file"
        onChange={async (e) => {
          const file = (e.target as HTMLInputElement).files?.[0];
          if (!file) return;
          try {
            await send(file);
            setMsg({ ok: true, text: `${file.name} installiert.` });
          } catch (err) {
            setMsg({ ok: false, text: (err as Error).message });
          }
        }}
      />
      {msg && <span class={msg.ok ? 'ok' : 'error'}>{msg.text}</span>}
    </label>
  );
}

async function uploadRaw(path: string, file: File): Promise<void> {
  const res = await fetch(`${API}${path}`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: file });
  if (!res.ok) throw new Error((await res.text()).trim());
}

export function SystemPage() {
  const info = usePoll<Info>('/system/info', SLOW_MS);
  const updates = usePoll<{ tools: Update[] }>('/system/updates', SLOW_MS * 10);
  const dumps = usePoll<{ name: string; size_bytes?: number }[]>('/system/aacs-dumps', SLOW_MS);
  const logs = usePoll<LogLine[]>('/logs?limit=100', SLOW_MS);
  return (
    <>
      <Section title="Werkzeuge und Updates" stale={updates.stale || info.stale} error={updates.error ?? info.error}>
        <table class="table">
          <thead>
            <tr>
              <th>Werkzeug</th>
              <th>installiert</th>
              <th>aktuell</th>
            </tr>
          </thead>
          <tbody>
            {updates.data?.tools.map((u) => (
              <tr key={u.tool} class={u.update_available ? 'warn' : ''}>
                <td>{u.tool}</td>
                <td>{u.installed ?? '–'}</td>
                <td>
                  {u.latest ?? '–'}
                  {u.update_available && ' (Update verfügbar)'}
                  {u.error && <span class="muted"> · {u.error}</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
      <Section title="Schlüssel">
        {info.data && (
          <ul>
            <li>Schlüsselspeicher: {info.data.keys.keystore.installed ? `${info.data.keys.keystore.schluessel} Schlüssel (seit ${when(info.data.keys.keystore.installed_at)})` : 'keiner'}</li>
            <li>KEYDB.cfg: {info.data.keys.keydb.present ? `${info.data.keys.keydb.entries ?? 0} Einträge` : 'keine'}</li>
            <li>MakeMKV-Schlüssel: {info.data.keys.ripper_app_key === 'set' ? 'gesetzt' : 'nicht gesetzt'}</li>
          </ul>
        )}
        <Upload label="Schlüsselspeicher hochladen (zip)" send={(f) => uploadRaw('/system/keystore', f).then(info.refresh)} />
        <Upload label="KEYDB.cfg hochladen" send={async (f) => request('POST', '/system/keydb', { content: await f.text() }).then(info.refresh)} />
        <p>AACS-Dumps:</p>
        <ul>
          {dumps.data?.length === 0 && <li class="muted">keine</li>}
          {dumps.data?.map((d) => (
            <li key={d.name}>
              <a href={`${API}/system/aacs-dumps/${encodeURIComponent(d.name)}`}>{d.name}</a> {d.size_bytes !== undefined && <span class="muted">{bytes(d.size_bytes)}</span>}
            </li>
          ))}
        </ul>
      </Section>
      <Section title="Benachrichtigung">
        {info.data && (
          <p>
            {info.data.webhook.configured ? `Webhook (${info.data.webhook.kind})` : 'Kein Webhook eingerichtet.'}
            {info.data.webhook.last && ` · zuletzt ${when(info.data.webhook.last.at)}: ${info.data.webhook.last.message}`}
          </p>
        )}
        <Action label="Testnachricht senden" run={() => post('/notifications/test').then(info.refresh)} />
      </Section>
      <Section title="Einstellungen">
        <SettingsForm />
      </Section>
      <Section title="Protokoll" stale={logs.stale} error={logs.error}>
        <ul class="logs">
          {logs.data?.map((l, i) => (
            <li key={i} class={`log-${l.level}`}>
              <span class="muted">{when(l.ts)}</span> {l.source}: {l.message}
            </li>
          ))}
        </ul>
      </Section>
    </>
  );
}
