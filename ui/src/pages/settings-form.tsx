import { useEffect, useState } from 'preact/hooks';
import { get, put } from '../api.js';
import { RIP_TITLE_KINDS } from '../../../shared/disc-titles.js';
import { MAX_SIMILAR_TITLES_MAX, MAX_SIMILAR_TITLES_MIN } from '../../../shared/main-feature.js';
import { CHUNK_MIN_MINUTES_MAX } from '../../../shared/chunking.js';
import { toggleChoice } from '../disc-titles.js';
import { languageName, t, tKnown, type MessageKey } from '../i18n/index.js';

type Value = string | boolean | number | string[];
type Values = Record<string, Value>;

/** A list setting (the language lists) as the text field shows it, and back: "deu, eng" ⇄ ["deu", "eng"]. */
const listText = (v: Value): string => (Array.isArray(v) ? v.join(', ') : String(v));
const textList = (text: string): string[] => text.split(/[\s,;]+/).map((s) => s.trim().toLowerCase()).filter(Boolean);
const same = (a: Value, b: Value): boolean => (Array.isArray(a) && Array.isArray(b) ? a.join(',') === b.join(',') : a === b);

/** The label of a setting in the chosen language; a setting the catalog does not know shows its own name. */
export function settingLabel(name: string): string {
  return tKnown(`setting.${name}`) ?? name;
}

/**
 * A list setting of fixed choices shown as boxes, in the order of the choices: a box ticked or
 * unticked gives the new list. The server refuses a list it does not accept (ripTitleKinds: an empty
 * one) with its reason, which the form shows like any refusal.
 */
const CHOICES: Record<string, readonly string[]> = { ripTitleKinds: RIP_TITLE_KINDS };

/** Number settings that are no seconds: their bounds, and a step where decimals are taken (the server checks them too). */
const NUMBER_BOUNDS: Record<string, { min: number; max: number; step?: string }> = {
  maxSimilarTitles: { min: MAX_SIMILAR_TITLES_MIN, max: MAX_SIMILAR_TITLES_MAX },
  chunkMinMinutes: { min: 0, max: CHUNK_MIN_MINUTES_MAX, step: 'any' },
};

const MASK = '********';
const SECRET = new Set(['ripperAppKey', 'mediaServerKey', 'webhookUrl', 'tmdbApiKey', 'omdbApiKey']);
/** Secrets typed hidden; the webhook address is one too (the server masks it), but people must see the address they paste. */
const HIDDEN = new Set(['ripperAppKey', 'mediaServerKey', 'tmdbApiKey', 'omdbApiKey']);

/** Settings of a few fixed words: chosen, not typed (the server checks them too). */
const WORDS: Record<string, readonly string[]> = { mediaServerType: ['', 'jellyfin', 'emby', 'plex', 'kodi'] };
const WORD_LABELS: Record<string, string> = { jellyfin: 'Jellyfin', emby: 'Emby', plex: 'Plex', kodi: 'Kodi' };

/** Languages offered by name for the language lists (ISO 639-2/B as the settings take them); any other code may still be typed. */
const COMMON_LANGUAGES = ['deu', 'eng', 'fra', 'spa', 'ita', 'nld', 'pol', 'por', 'rus', 'tur', 'swe', 'dan', 'nor', 'fin', 'ces', 'hun', 'ell', 'jpn', 'kor', 'zho', 'ara', 'heb', 'hin'];

/** A group of settings on the System page: a heading, and the internals folded away. */
export interface SettingsGroup {
  title: MessageKey;
  names: string[];
  collapsed?: boolean;
}

interface PresetsAnswer {
  workers: { name: string; online: boolean; categories: { name: string; presets: string[] }[]; recommendation: { preset: string | null } }[];
}

/**
 * The presets to choose from: those of the online workers (else the lists reported last), by
 * category, the recommendation first and marked; the stored value stays choosable even when no list
 * has it any more (the server checks a changed value against the lists).
 */
function presetOptions(answer: PresetsAnswer | null, current: string): { recommended: string | null; groups: { name: string; presets: string[] }[] } {
  const workers = answer ? (answer.workers.some((w) => w.online) ? answer.workers.filter((w) => w.online) : answer.workers) : [];
  const recommended = workers.find((w) => w.recommendation.preset)?.recommendation.preset ?? null;
  const groups = new Map<string, Set<string>>();
  for (const w of workers) for (const c of w.categories) for (const p of c.presets) (groups.get(c.name) ?? groups.set(c.name, new Set()).get(c.name)!).add(p);
  const known = new Set([...groups.values()].flatMap((g) => [...g]));
  const out = [...groups].map(([name, presets]) => ({ name, presets: [...presets] }));
  if (current && !known.has(current)) out.unshift({ name: '', presets: [current] });
  return { recommended, groups: out };
}

/** A form over the given settings (all when `only` is absent); saves only what changed. */
export function SettingsForm({ only, onSaved, submitLabel, groups, hide, warnUnsaved }: { only?: string[]; onSaved?: () => void; submitLabel?: string; groups?: SettingsGroup[]; hide?: string[]; warnUnsaved?: boolean }) {
  const [stored, setStored] = useState<Values | null>(null);
  const [values, setValues] = useState<Values>({});
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const [presets, setPresets] = useState<PresetsAnswer | null>(null);
  useEffect(() => {
    if (only && !only.includes('transcodePreset')) return;
    get<PresetsAnswer>('/presets').then(setPresets, () => setPresets(null));
  }, []);
  useEffect(() => {
    get<Values>('/settings').then(
      (v) => {
        setStored(v);
        setValues(v);
      },
      (err: Error) => setMessage({ ok: false, text: err.message }),
    );
  }, []);
  const names = stored ? (only ?? Object.keys(stored)).filter((n) => n in stored && !hide?.includes(n)) : [];
  const changes = (): Values => {
    const changed: Values = {};
    if (!stored) return changed;
    for (const n of names) {
      // A list setting is edited as text and sent as a list.
      const v = Array.isArray(stored[n]) && typeof values[n] === 'string' ? textList(values[n] as string) : values[n];
      if (!same(v, stored[n])) changed[n] = v;
    }
    return changed;
  };
  const dirty = Boolean(warnUnsaved) && Object.keys(changes()).length > 0;
  // Unsaved edits are not lost silently: leaving the page (a link in the app, a reload, closing the tab) asks first.
  useEffect(() => {
    if (!dirty) return;
    const onUnload = (e: BeforeUnloadEvent) => {
      e.preventDefault();
      e.returnValue = '';
    };
    const onClick = (e: MouseEvent) => {
      const link = (e.target as Element | null)?.closest?.('a[href^="#"]');
      if (link && !window.confirm(t('settings.unsavedLeave'))) {
        e.preventDefault();
        e.stopPropagation();
      }
    };
    window.addEventListener('beforeunload', onUnload);
    document.addEventListener('click', onClick, true);
    return () => {
      window.removeEventListener('beforeunload', onUnload);
      document.removeEventListener('click', onClick, true);
    };
  }, [dirty]);
  if (!stored) return <p class="muted">{message?.text ?? t('common.loading')}</p>;
  const save = async () => {
    const changed = changes();
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
  const field = (n: string) =>
        typeof stored[n] === 'boolean' ? (
          <label class="check" key={n}>
            <input type="checkbox" name={n} checked={values[n] as boolean} onChange={(e) => setValues({ ...values, [n]: (e.target as HTMLInputElement).checked })} />
            {settingLabel(n)}
          </label>
        ) : CHOICES[n] && Array.isArray(stored[n]) ? (
          <fieldset key={n} data-testid={`setting-${n}`}>
            <legend>{settingLabel(n)}</legend>
            <div class="kinds">
              {CHOICES[n].map((choice) => (
                <label class="check" key={choice}>
                  <input
                    type="checkbox"
                    name={n}
                    value={choice}
                    checked={Array.isArray(values[n]) && (values[n] as string[]).includes(choice)}
                    onChange={() => setValues({ ...values, [n]: toggleChoice(CHOICES[n], Array.isArray(values[n]) ? (values[n] as string[]) : [], choice) })}
                  />
                  {tKnown(`titleKind.${choice}`) ?? choice}
                </label>
              ))}
            </div>
            {tKnown(`settings.${n}Help`) && <p class="muted">{tKnown(`settings.${n}Help`)}</p>}
          </fieldset>
        ) : Array.isArray(stored[n]) ? (
          <div class="language-list" key={n}>
            <label>
              {settingLabel(n)}
              <input name={n} autocomplete="off" value={listText(values[n])} placeholder="deu, eng" onInput={(e) => setValues({ ...values, [n]: (e.target as HTMLInputElement).value })} />
            </label>
            {(() => {
              const codes = textList(listText(values[n]));
              return (
                <>
                  <p class="muted" data-testid={`languages-${n}`}>
                    {codes.length ? codes.map((c) => `${languageName(c)} (${c})`).join(', ') : t('common.none')}
                  </p>
                  <label>
                    {t('settings.addLanguage')}
                    <select
                      name={`${n}-add`}
                      value=""
                      onChange={(e) => {
                        const code = (e.target as HTMLSelectElement).value;
                        if (code && !codes.includes(code)) setValues({ ...values, [n]: [...codes, code].join(', ') });
                      }}
                    >
                      <option value="">{t('settings.addLanguageChoose')}</option>
                      {COMMON_LANGUAGES.filter((c) => !codes.includes(c)).map((c) => (
                        <option key={c} value={c}>
                          {languageName(c)} ({c})
                        </option>
                      ))}
                    </select>
                  </label>
                </>
              );
            })()}
          </div>
        ) : WORDS[n] ? (
          <label key={n}>
            {settingLabel(n)}
            <select name={n} value={String(values[n]).toLowerCase()} onChange={(e) => setValues({ ...values, [n]: (e.target as HTMLSelectElement).value })}>
              {WORDS[n].map((w) => (
                <option key={w} value={w}>
                  {w ? (WORD_LABELS[w] ?? w) : t('common.none')}
                </option>
              ))}
            </select>
          </label>
        ) : n === 'transcodePreset' ? (
          <label key={n}>
            {settingLabel(n)}
            <select name={n} value={values[n] as string} onChange={(e) => setValues({ ...values, [n]: (e.target as HTMLSelectElement).value })} data-testid="preset-select">
              {(() => {
                const { recommended, groups } = presetOptions(presets, stored[n] as string);
                const option = (p: string) => (
                  <option key={p} value={p} translate={false}>
                    {p === recommended ? t('settings.presetRecommended', { preset: p }) : p}
                  </option>
                );
                return [
                  ...(recommended ? [option(recommended)] : []),
                  ...groups.map((g) =>
                    g.name ? (
                      <optgroup key={g.name} label={g.name}>
                        {g.presets.filter((p) => p !== recommended).map(option)}
                      </optgroup>
                    ) : (
                      g.presets.filter((p) => p !== recommended).map(option)
                    ),
                  ),
                ];
              })()}
            </select>
          </label>
        ) : typeof stored[n] === 'number' ? (
          <label key={n}>
            {settingLabel(n)}
            <input name={n} type="number" min={NUMBER_BOUNDS[n]?.min ?? 0} max={NUMBER_BOUNDS[n]?.max} step={NUMBER_BOUNDS[n]?.step} value={values[n] as number} onInput={(e) => setValues({ ...values, [n]: Number((e.target as HTMLInputElement).value) })} />
          </label>
        ) : (
          <label key={n}>
            {settingLabel(n)}
            <input
              name={n}
              type={HIDDEN.has(n) ? 'password' : 'text'}
              inputMode={n === 'webhookUrl' || n === 'mediaServerUrl' ? 'url' : undefined}
              autocomplete="off"
              value={values[n] as string}
              placeholder={SECRET.has(n) && stored[n] === MASK ? t('settings.secretSet') : ''}
              onFocus={(e) => SECRET.has(n) && values[n] === MASK && (e.target as HTMLInputElement).select()}
              onInput={(e) => setValues({ ...values, [n]: (e.target as HTMLInputElement).value })}
            />
          </label>
        );
  return (
    <form
      class="form settings"
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      {groups
        ? (() => {
            // Each setting once, in the first group naming it; what no group names goes to the last group.
            const placed = new Set<string>();
            const lists = groups.map((g) => g.names.filter((n) => names.includes(n) && !placed.has(n) && (placed.add(n), true)));
            const rest = names.filter((n) => !placed.has(n));
            if (lists.length) lists[lists.length - 1].push(...rest);
            return groups.map((g, i) =>
              lists[i].length === 0 ? null : g.collapsed ? (
                <details class="settings-group" key={g.title} data-testid={`settings-group-${i}`}>
                  <summary>
                    <h3>{t(g.title)}</h3>
                  </summary>
                  {lists[i].map(field)}
                </details>
              ) : (
                <section class="settings-group" key={g.title} aria-label={t(g.title)} data-testid={`settings-group-${i}`}>
                  <h3>{t(g.title)}</h3>
                  {lists[i].map(field)}
                </section>
              ),
            );
          })()
        : names.map(field)}
      {dirty && (
        <p class="warn" role="status" data-testid="settings-unsaved">
          {t('settings.unsaved')}
        </p>
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
