import { useEffect, useState } from 'preact/hooks';
import { get, put } from '../api.js';
import { t, tKnown } from '../i18n/index.js';

type Values = Record<string, string | boolean>;

/** The label of a setting in the chosen language; a setting the catalog does not know shows its own name. */
export function settingLabel(name: string): string {
  return tKnown(`setting.${name}`) ?? name;
}

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
  if (!stored) return <p class="muted">{message?.text ?? t('common.loading')}</p>;
  const names = (only ?? Object.keys(stored)).filter((n) => n in stored);
  const save = async () => {
    const changed: Values = {};
    for (const n of names) if (values[n] !== stored[n]) changed[n] = values[n];
    try {
      const fresh = await put<Values>('/settings', changed);
      setStored(fresh);
      setValues(fresh);
      setMessage({ ok: true, text: Object.keys(changed).length ? t('settings.saved') : t('settings.unchanged') });
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
            {settingLabel(n)}
          </label>
        ) : (
          <label key={n}>
            {settingLabel(n)}
            <input
              name={n}
              type={SECRET.has(n) ? 'password' : 'text'}
              autocomplete="off"
              value={values[n] as string}
              placeholder={SECRET.has(n) && stored[n] === MASK ? t('settings.secretSet') : ''}
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
        {submitLabel ?? t('settings.save')}
      </button>
    </form>
  );
}
