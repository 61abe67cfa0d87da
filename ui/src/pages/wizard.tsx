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

/** Where the wizard is, kept in this browser so a reload stays on the step (the steps' settings are on the server). */
const STEP_KEY = 'ripwerk.setupStep';

function storedStep(): number {
  try {
    const i = STEPS.findIndex((s) => s.step === localStorage.getItem(STEP_KEY));
    return i < 0 ? 0 : i;
  } catch {
    return 0;
  }
}

function keepStep(i: number | null): void {
  try {
    if (i === null) localStorage.removeItem(STEP_KEY);
    else localStorage.setItem(STEP_KEY, STEPS[i].step);
  } catch {
    // Storage off (private mode): a reload starts at the first step again.
  }
}

/** The first-run wizard: one step per page, each may be skipped; shown until setup is completed. */
export function Wizard({ onDone }: { onDone(): void }) {
  const [i, setStep] = useState(storedStep);
  const setI = (n: number) => {
    keepStep(n);
    setStep(n);
  };
  const [error, setError] = useState<string | null>(null);
  const step = STEPS[i];
  const next = async () => {
    if (i < STEPS.length - 1) return setI(i + 1);
    try {
      await post('/setup/complete');
      keepStep(null);
      onDone();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <section class="section wizard" aria-label={t('wizard.label')} data-testid="wizard">
      <h1>{t('wizard.heading', { step: i + 1, steps: STEPS.length, title: t(step.title) })}</h1>
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

/** On the other pages while setup is open: the way back to it. */
export function SetupBanner() {
  return (
    <p class="setup-banner" role="status" data-testid="setup-banner">
      {t('wizard.open')} <a href="#/einrichtung">{t('wizard.resume')}</a>
    </p>
  );
}
