import { useState } from 'preact/hooks';
import { API, post, request, type LogEntry, type SystemInfo, type UpdateEntry } from '../api.js';
import { Action, MissingFix, Section } from '../components.js';
import { kindRows, type DiscKinds } from '../disc-support.js';
import { bytes, when } from '../format.js';
import { t } from '../i18n/index.js';
import { SLOW_MS, usePoll } from '../poll.js';
import { SettingsForm, type SettingsGroup } from './settings-form.js';

/**
 * The settings by what they are about; what no group names (new settings, the internals such as the
 * Home Assistant prefix or private webhooks) lands in the last group, Erweitert, folded away.
 * setupComplete is the wizard's own state and not shown.
 */
const SETTINGS_GROUPS: SettingsGroup[] = [
  { title: 'settings.group.library', names: ['quickPickMovies', 'quickPickSeries', 'quickPickMusic', 'mediaServerType', 'mediaServerUrl', 'mediaServerKey', 'tmdbApiKey', 'omdbApiKey'] },
  { title: 'settings.group.ripping', names: ['autoRipStart', 'autoEject', 'mainFeatureOnly', 'ripTitleKinds', 'minTitleSeconds', 'keepOriginal', 'ripperAppKey'] },
  { title: 'settings.group.compress', names: ['transcodeEnabled', 'transcodePreset', 'audioLanguages', 'subtitleLanguages', 'keepSurround', 'stereoCompanion', 'originalLanguage', 'burnForcedSubtitles', 'keepCommentary', 'keepAudioDescription', 'chunkMinMinutes'] },
  { title: 'settings.group.notify', names: ['webhookUrl', 'webhookKind', 'homeAssistantDiscovery'] },
  { title: 'settings.group.advanced', names: [], collapsed: true },
];

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
            setMsg({ ok: true, text: t('system.uploaded', { file: file.name }) });
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

/** One worker: per disc kind whether it can rip it, and what to install when not. */
function DiscKindsCard({ name, online, kinds }: { name: string; online: boolean; kinds: DiscKinds | null | undefined }) {
  const rows = kindRows(kinds);
  return (
    <article class="card" data-testid={`kinds-${name}`}>
      <div class="card-body">
        <h3>
          {name} <span class={online ? 'badge ok' : 'badge warn'}>{online ? t('common.online') : t('common.offline')}</span>
        </h3>
        {rows ? (
          <ul class="kinds">
            {rows.map((r) => (
              <li key={r.kind} data-testid={`kind-${r.kind}`}>
                <span class={r.can ? 'ok' : 'warn'} role="img" aria-label={r.can ? t('system.can') : t('system.cannot')}>
                  {r.can ? '✓' : '✗'}
                </span>{' '}
                {r.label}
                {r.missing && <MissingFix missing={r.missing} />}
              </li>
            ))}
          </ul>
        ) : (
          <p class="muted">{t('system.discKindsUnknown')}</p>
        )}
      </div>
    </article>
  );
}

export function SystemPage() {
  const info = usePoll<SystemInfo>('/system/info', SLOW_MS);
  const updates = usePoll<{ tools: UpdateEntry[] }>('/system/updates', SLOW_MS * 10);
  const dumps = usePoll<{ name: string; size_bytes?: number }[]>('/system/aacs-dumps', SLOW_MS);
  const logs = usePoll<LogEntry[]>('/logs?limit=100', SLOW_MS);
  // Nothing moves once shown (issue 38): the sections at the top wait for their first answers and come
  // together; the tool versions, whose check may ask the internet, sit below the settings.
  const firstAnswers = [info, dumps].every((p) => p.data !== null || p.error !== null);
  if (!firstAnswers) {
    return (
      <p class="muted page-loading" aria-busy="true" data-testid="system-loading">
        {t('common.loading')}
      </p>
    );
  }
  return (
    <>
      <Section title={t('system.discKinds')} stale={info.stale} error={info.error}>
        <div class="cards">
          {info.data?.workers.map((w) => (
            <DiscKindsCard key={w.name} name={w.name} online={w.online} kinds={w.disc_kinds} />
          ))}
        </div>
      </Section>
      <Section title={t('system.keys')}>
        {info.data && (
          <ul>
            <li>
              {t('system.keystore', {
                value: info.data.keys.keystore.installed ? t('system.keystoreInstalled', { n: info.data.keys.keystore.schluessel, when: when(info.data.keys.keystore.installed_at) }) : t('system.keystoreNone'),
              })}
            </li>
            <li>{t('system.keydb', { value: info.data.keys.keydb.present ? t('system.keydbEntries', { n: info.data.keys.keydb.entries ?? 0 }) : t('common.none') })}</li>
            <li>{t('system.makemkvKey', { value: info.data.keys.ripper_app_key === 'set' ? t('system.keySet') : t('system.keyNotSet') })}</li>
          </ul>
        )}
        <Upload label={t('system.uploadKeystore')} send={(f) => uploadRaw('/system/keystore', f).then(info.refresh)} />
        <Upload label={t('system.uploadKeydb')} send={async (f) => request('POST', '/system/keydb', { content: await f.text() }).then(info.refresh)} />
        <p>{t('system.dumps')}</p>
        <ul>
          {dumps.data?.length === 0 && <li class="muted">{t('common.none')}</li>}
          {dumps.data?.map((d) => (
            <li key={d.name}>
              <a href={`${API}/system/aacs-dumps/${encodeURIComponent(d.name)}`}>{d.name}</a> {d.size_bytes !== undefined && <span class="muted">{bytes(d.size_bytes)}</span>}
            </li>
          ))}
        </ul>
      </Section>
      <Section title={t('system.notify')}>
        {info.data && (
          <p>
            {info.data.webhook.configured ? t('system.webhook', { kind: info.data.webhook.kind ?? '' }) : t('system.noWebhook')}
            {info.data.webhook.last && ` · ${t('system.webhookLast', { when: when(info.data.webhook.last.at), message: info.data.webhook.last.message })}`}
          </p>
        )}
        <Action label={t('system.testMessage')} run={() => post('/notifications/test').then(info.refresh)} />
      </Section>
      <Section title={t('system.settings')}>
        <SettingsForm groups={SETTINGS_GROUPS} hide={['setupComplete']} warnUnsaved />
      </Section>
      <Section title={t('system.tools')} stale={updates.stale || info.stale} error={updates.error ?? info.error}>
        <table class="table">
          <thead>
            <tr>
              <th>{t('system.col.tool')}</th>
              <th>{t('system.col.installed')}</th>
              <th>{t('system.col.latest')}</th>
            </tr>
          </thead>
          <tbody>
            {updates.data?.tools.map((u) => (
              <tr key={u.tool} class={u.update_available ? 'warn' : ''}>
                <td>{u.tool}</td>
                <td>{u.installed ?? '–'}</td>
                <td>
                  {u.latest ?? '–'}
                  {u.update_available && ` ${t('system.updateAvailable')}`}
                  {u.error && (
                    <span class="muted" translate={false}>
                      {` · ${u.error}`}
                    </span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
      <Section title={t('system.log')} stale={logs.stale} error={logs.error}>
        <ul class="logs">
          {logs.data?.map((l, i) => (
            <li key={i} class={`log-${l.level}`} translate={false}>
              <span class="muted">{when(l.ts)}</span> {l.source}: {l.message}
            </li>
          ))}
        </ul>
      </Section>
    </>
  );
}
