import { useEffect, useState } from 'preact/hooks';
import { get, put } from '../api.js';

type Values = Record<string, string | boolean>;

/** German labels of the settings; every setting of the API appears (unknown ones with their own name). */
export const SETTING_LABELS: Record<string, string> = {
  workDir: 'Arbeitsverzeichnis für Rohdaten',
  transcodeEnabled: 'Komprimieren',
  keepOriginal: 'Rohdaten behalten',
  autoRipStart: 'Automatisch rippen beim Einlegen',
  ripperAppKey: 'MakeMKV-Schlüssel',
  transcodePreset: 'HandBrake-Preset',
  autoEject: 'Nach dem Rip auswerfen',
  mainFeatureOnly: 'Nur Hauptfilm',
  mediaServerType: 'Medienserver (jellyfin, emby, plex, kodi)',
  mediaServerUrl: 'Medienserver-Adresse',
  mediaServerKey: 'Medienserver-Schlüssel',
  webhookUrl: 'Benachrichtigungs-URL (Webhook)',
  webhookKind: 'Webhook-Art (auto, discord, slack, ntfy, generic)',
  allowPrivateWebhooks: 'Webhook auch an diesen Rechner (localhost) oder link-lokale Adressen',
  tmdbApiKey: 'TMDB-Schlüssel',
  omdbApiKey: 'OMDb-Schlüssel',
  quickPickMovies: 'Ordner für Filme',
  quickPickSeries: 'Ordner für Serien',
  quickPickMusic: 'Ordner für Musik',
  musicCountry: 'Land der bevorzugten CD-Ausgabe (z. B. DE)',
  setupComplete: 'Einrichtung abgeschlossen',
  homeAssistantDiscovery: 'Home Assistant (MQTT-Discovery)',
  homeAssistantPrefix: 'Home-Assistant-Präfix',
};

const MASK = '********';
const SECRET = new Set(['ripperAppKey', 'mediaServerKey', 'webhookUrl', 'tmdbApiKey', 'omdbApiKey']);

/** A form over the given settings (all when `only` is absent); saves only what changed. */
export function SettingsForm({ only, onSaved, submitLabel }: { only?: string[]; onSaved?: () => void; submitLabel?: string }) {
  const [stored, setStored] = useState<Values | null>(null);
  const [values, setValues] = useState<Values>({});
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  useEffect(() => {
    get<Values>('/settings').then(
      (v) => {
        setStored(v);
        setValues(v);
      },
      (err: Error) => setMessage({ ok: false, text: err.message }),
    );
  }, []);
  if (!stored) return <p class="muted">{message?.text ?? 'lädt …'}</p>;
  const names = (only ?? Object.keys(stored)).filter((n) => n in stored);
  const save = async () => {
    const changed: Values = {};
    for (const n of names) if (values[n] !== stored[n]) changed[n] = values[n];
    try {
      const fresh = await put<Values>('/settings', changed);
      setStored(fresh);
      setValues(fresh);
      setMessage({ ok: true, text: Object.keys(changed).length ? 'Gespeichert.' : 'Nichts geändert.' });
      onSaved?.();
    } catch (err) {
      setMessage({ ok: false, text: (err as Error).message });
    }
  };
  return (
    <form
      class="form settings"
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      {names.map((n) =>
        typeof stored[n] === 'boolean' ? (
          <label class="check" key={n}>
            <input type="checkbox" name={n} checked={values[n] as boolean} onChange={(e) => setValues({ ...values, [n]: (e.target as HTMLInputElement).checked })} />
            {SETTING_LABELS[n] ?? n}
          </label>
        ) : (
          <label key={n}>
            {SETTING_LABELS[n] ?? n}
            <input
              name={n}
              type={SECRET.has(n) ? 'password' : 'text'}
              autocomplete="off"
              value={values[n] as string}
              placeholder={SECRET.has(n) && stored[n] === MASK ? 'gesetzt' : ''}
              onFocus={(e) => SECRET.has(n) && values[n] === MASK && (e.target as HTMLInputElement).select()}
              onInput={(e) => setValues({ ...values, [n]: (e.target as HTMLInputElement).value })}
            />
          </label>
        ),
      )}
      {message && (
        <p class={message.ok ? 'ok' : 'error'} role={message.ok ? 'status' : 'alert'}>
          {message.text}
        </p>
      )}
      <button type="submit" class="primary">
        {submitLabel ?? 'Speichern'}
      </button>
    </form>
  );
}
