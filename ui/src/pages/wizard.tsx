import { useState } from 'preact/hooks';
import { post } from '../api.js';
import { t, type MessageKey } from '../i18n/index.js';
import { SettingsForm } from './settings-form.js';

const STEPS: { step: string; title: MessageKey; text: MessageKey; settings: string[] }[] = [
  { step: 'metadata', title: 'wizard.metadata.title', text: 'wizard.metadata.text', settings: ['tmdbApiKey', 'omdbApiKey'] },
  { step: 'languages', title: 'wizard.languages.title', text: 'wizard.languages.text', settings: ['audioLanguages', 'subtitleLanguages', 'keepSurround', 'stereoCompanion', 'originalLanguage', 'burnForcedSubtitles'] },
  { step: 'media_server', title: 'wizard.mediaServer.title', text: 'wizard.mediaServer.text', settings: ['mediaServerType', 'mediaServerUrl', 'mediaServerKey'] },
  { step: 'webhook', title: 'wizard.webhook.title', text: 'wizard.webhook.text', settings: ['webhookUrl', 'webhookKind'] },
  { step: 'work_dir', title: 'wizard.workDir.title', text: 'wizard.workDir.text', settings: ['workDir'] },
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
    <section class="section wizard" aria-label={t('wizard.label')} data-testid="wizard">
      <h2>{t('wizard.heading', { step: i + 1, steps: STEPS.length, title: t(step.title) })}</h2>
      <p>{t(step.text)}</p>
      <SettingsForm key={step.step} only={step.settings} submitLabel={t('wizard.saveNext')} onSaved={() => void next()} />
      {error && <p class="error">{error}</p>}
      <div class="row">
        {i > 0 && (
          <button type="button" onClick={() => setI(i - 1)}>
            {t('wizard.back')}
          </button>
        )}
        <button type="button" onClick={() => void next()} data-testid="wizard-skip">
          {i < STEPS.length - 1 ? t('wizard.skip') : t('wizard.finish')}
        </button>
      </div>
    </section>
  );
}
