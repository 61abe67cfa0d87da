import { useState } from 'preact/hooks';
import { post } from '../api.js';
import { SettingsForm } from './settings-form.js';

const STEPS: { step: string; title: string; text: string; settings: string[] }[] = [
  { step: 'metadata', title: 'Metadaten', text: 'Mit einem TMDB- oder OMDb-Schlüssel erkennt Ripwerk Filme und Serien samt Poster. Ohne Schlüssel wird nur die Anime-Datenbank gefragt.', settings: ['tmdbApiKey', 'omdbApiKey'] },
  { step: 'media_server', title: 'Medienserver', text: 'Jellyfin, Emby, Plex oder Kodi: nach jedem Rip wird die Bibliothek aktualisiert.', settings: ['mediaServerType', 'mediaServerUrl', 'mediaServerKey'] },
  { step: 'webhook', title: 'Benachrichtigung', text: 'Discord, Slack, ntfy oder eine eigene Adresse: eine Nachricht, wenn ein Auftrag endet.', settings: ['webhookUrl', 'webhookKind'] },
  { step: 'work_dir', title: 'Arbeitsverzeichnis', text: 'Wohin die Rohdaten kommen, bevor sie komprimiert werden (unter dem Medienordner; leer heißt Standard).', settings: ['workDir'] },
];

/** The first-run wizard: one step per page, each may be skipped; shown until setup is completed. */
export function Wizard({ onDone }: { onDone(): void }) {
  const [i, setI] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const step = STEPS[i];
  const next = async () => {
    if (i < STEPS.length - 1) return setI(i + 1);
    try {
      await post('/setup/complete');
      onDone();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <section class="section wizard" aria-label="Einrichtung" data-testid="wizard">
      <h2>
        Einrichtung {i + 1}/{STEPS.length}: {step.title}
      </h2>
      <p>{step.text}</p>
      <SettingsForm key={step.step} only={step.settings} submitLabel="Speichern und weiter" onSaved={() => void next()} />
      {error && <p class="error">{error}</p>}
      <div class="row">
        {i > 0 && (
          <button type="button" onClick={() => setI(i - 1)}>
            Zurück
          </button>
        )}
        <button type="button" onClick={() => void next()} data-testid="wizard-skip">
          {i < STEPS.length - 1 ? 'Überspringen' : 'Einrichtung abschließen'}
        </button>
      </div>
    </section>
  );
}
