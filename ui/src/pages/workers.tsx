import { API, del, type Worker } from '../api.js';
import { Action, Empty, Section } from '../components.js';
import { when } from '../format.js';
import { SLOW_MS, usePoll } from '../poll.js';

interface PresetAnswer {
  workers?: { name: string; node: string; categories?: { name: string; presets: string[] }[]; recommendation?: { preset: string | null; reason: string } }[];
}

interface PathMap {
  variable: string;
  value: string;
  entries: { name: string; protocol: string; mount_point: string; source: string; value: string }[];
  hinweis: string;
}

export function WorkersPage() {
  const workers = usePoll<Worker[]>('/capabilities', SLOW_MS);
  const presets = usePoll<PresetAnswer>('/presets', SLOW_MS * 5);
  const pathMap = usePoll<PathMap>('/worker-setup/pfad-map', SLOW_MS);
  return (
    <>
      <Section title="Worker" stale={workers.stale} error={workers.error}>
        {workers.data?.length === 0 && <Empty>Noch kein Worker hat sich gemeldet.</Empty>}
        <div class="cards">
          {workers.data?.map((w) => {
            const p = presets.data?.workers?.find((x) => x.node === w.node);
            return (
              <article class="card" key={w.node} data-testid={`worker-${w.name}`}>
                <div class="card-body">
                  <h3>
                    {w.name} <span class={w.online ? 'badge ok' : 'badge warn'}>{w.online ? 'online' : 'offline'}</span>
                    {w.native && <span class="badge" title="nimmt nur Transcode-Aufträge an">nativ</span>}
                  </h3>
                  <p class="muted">
                    {w.node}
                    {w.ip && ` · ${w.ip}`} · zuletzt gesehen {when(w.last_seen)}
                  </p>
                  <p>Encoder: {w.encoders.length ? w.encoders.join(', ') : 'keine'}</p>
                  <p>
                    Schlüssel: {w.schluessel} {w.key_source && <span class="muted">({w.key_source})</span>}
                  </p>
                  <details>
                    <summary>Werkzeuge</summary>
                    <ul>
                      {Object.entries(w.tools).map(([tool, v]) => (
                        <li key={tool}>
                          {tool}: {v ?? 'fehlt'}
                        </li>
                      ))}
                    </ul>
                  </details>
                  {p?.recommendation && (
                    <p>
                      Empfohlenes Preset: <strong>{p.recommendation.preset ?? '–'}</strong> <span class="muted">({p.recommendation.reason})</span>
                    </p>
                  )}
                  {p?.categories && (
                    <details>
                      <summary>Presets</summary>
                      {p.categories.map((c) => (
                        <p key={c.name}>
                          <strong>{c.name}:</strong> {c.presets.join(', ')}
                        </p>
                      ))}
                    </details>
                  )}
                  {!w.online && <Action label="Worker entfernen" kind="danger" run={() => del(`/workers/${encodeURIComponent(w.name)}`).then(workers.refresh)} />}
                </div>
              </article>
            );
          })}
        </div>
        {presets.error && !presets.data && <p class="muted">Presets: {presets.error}</p>}
      </Section>
      <Section title="Weiteren Worker einrichten">
        <p>
          Ein Worker auf einem anderen Rechner braucht die Broker-Adresse (<code>MQTT_URL=mqtt://&lt;dieser Rechner&gt;:1883</code>) und das Broker-Geheimnis (
          <code>RIPWERK_BROKER_SECRET</code>): es steht auf diesem Rechner in <code>DATA_DIR/broker-secret</code>, etwa mit <code>sudo cat /var/lib/ripwerk/broker-secret</code>. Mit{' '}
          <code>sudo bash scripts/install.sh --agent --coordinator-url mqtt://… --broker-secret …</code> ist er eingerichtet.
        </p>
        <h3>Pfad-Zuordnung</h3>
        {pathMap.data ? (
          <div data-testid="path-map">
            {pathMap.data.value && (
              <pre class="pre">
                {pathMap.data.variable}={pathMap.data.value}
              </pre>
            )}
            <p class={pathMap.data.entries.length ? 'muted' : 'warn'}>{pathMap.data.hinweis}</p>
            {pathMap.data.entries.length > 0 && (
              <ul>
                {pathMap.data.entries.map((e) => (
                  <li key={e.name}>
                    {e.mount_point} ← {e.protocol} {e.source}
                    {e.protocol === 'NFS' && <span class="muted"> (auf dem Worker am selben Pfad einhängen)</span>}
                  </li>
                ))}
              </ul>
            )}
          </div>
        ) : (
          <p class="muted">Pfad-Zuordnung: {pathMap.error ?? 'lädt …'}</p>
        )}
        <h3>Nativer Worker (Windows ohne Container)</h3>
        <p class="muted">Nimmt nur Transcode-Aufträge an; rippen geht nur auf einem Rechner mit Laufwerk und Agent.</p>
        <ul>
          <li>
            <a href={`${API}/worker-setup/paket`}>Worker-Paket (zip, läuft mit Node)</a>
          </li>
          <li>
            <a href={`${API}/worker-setup/desktop`}>Installationsskript für Windows (PowerShell, als Administrator ausführen)</a>
          </li>
          <li>
            <a href={`${API}/worker-setup/desktop-exe`}>Installationsprogramm für Windows (.exe, etwa 74 MB; der erste Abruf baut es, das dauert bis zu einer Minute)</a>
          </li>
        </ul>
      </Section>
    </>
  );
}
