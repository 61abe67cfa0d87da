import { useState } from 'preact/hooks';
import { del, get, post, type Mount, type StorageTarget } from '../api.js';
import { Action, Empty, PathText, Section } from '../components.js';
import { relativeToMedia, useMediaRoot } from '../media-path.js';
import { bytes } from '../format.js';
import { t, tKnown } from '../i18n/index.js';
import { SLOW_MS, usePoll } from '../poll.js';

function targetName(name: string): string {
  return name.startsWith('mount:') ? t('storage.networkDrive', { name: name.slice(6) }) : (tKnown(`storage.target.${name}`) ?? name);
}

/** A target's warning in the UI's language: little space left (the server warns under 60 GB), or a share that is not there. */
function storageWarning(d: StorageTarget): string {
  const name = targetName(d.name);
  return d.free_bytes !== null ? t('storage.lowSpace', { name, free: bytes(d.free_bytes) }) : t('storage.shareDown', { name });
}

/** How full a target is as a bar: green, amber from 90 % used, red with the server's low-space warning; its words for screen readers. */
function FillBar({ target }: { target: StorageTarget }) {
  const total = target.total_bytes;
  const free = target.free_bytes;
  if (total === null || free === null || total <= 0) return null;
  const used = Math.max(0, total - free);
  const label = t('storage.fill', { name: targetName(target.name), free: bytes(free), total: bytes(total), percent: Math.round((used / total) * 100) });
  // The browser colours a meter by region: below `low` the best one, above `high` the worst.
  const high = target.warning ? 0 : total;
  return (
    <meter class={`storage-bar${target.warning ? ' full' : used / total >= 0.9 ? ' filling' : ''}`} min={0} max={total} value={used} optimum={0} low={Math.min(total * 0.9, high)} high={high} aria-label={label} title={label} data-testid={`fill-${target.name}`}>
      {label}
    </meter>
  );
}

export function StoragePage() {
  const info = usePoll<StorageTarget[]>('/storage-targets', SLOW_MS);
  const mounts = usePoll<Mount[]>('/storage-mounts', SLOW_MS);
  const root = useMediaRoot();
  const refresh = () => {
    mounts.refresh();
    info.refresh();
  };
  return (
    <>
      <Section title={t('storage.targets')} stale={info.stale} error={info.error}>
        <table class="table">
          <thead>
            <tr>
              <th>{t('storage.col.target')}</th>
              <th>{t('storage.col.path')}</th>
              <th>{t('storage.col.free')}</th>
              <th>{t('storage.col.total')}</th>
            </tr>
          </thead>
          <tbody>
            {info.data?.map((d) => (
              <tr key={d.name} class={d.warning ? 'warn' : ''}>
                <td>
                  {targetName(d.name)}
                  {d.network && <span class="badge">{t('storage.network')}</span>}
                  {d.mounted && !d.network && <span class="badge">{t('storage.attached')}</span>}
                  <FillBar target={d} />
                </td>
                <td>
                  <PathText path={d.path} root={root} />
                </td>
                <td class="num">{bytes(d.free_bytes)}</td>
                <td class="num">{bytes(d.total_bytes)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {info.data
          ?.filter((d) => d.warning)
          .map((d) => (
            <p class="warn" role="alert" key={d.name} data-testid={`warning-${d.name}`}>
              {storageWarning(d)}
            </p>
          ))}
      </Section>
      <Section title={t('storage.mounts')} stale={mounts.stale} error={mounts.error}>
        {mounts.data === null && mounts.error && (
          <p class="muted" translate={false}>
            {mounts.error}
          </p>
        )}
        {mounts.data?.length === 0 && <Empty>{t('storage.noMounts')}</Empty>}
        <ul class="status-list">
          {mounts.data?.map((m) => (
            <li key={m.name} class="job" data-testid={`mount-${m.name}`}>
              <div class="job-head">
                <span class="job-title">
                  {m.name} <span class="muted">({m.protocol} {m.source})</span>
                </span>
                <span>
                  <span class={m.mounted ? 'badge ok' : 'badge warn'}>{m.mounted ? t('storage.mounted') : t('storage.notMounted')}</span>{' '}
                  <span class={m.reachable ? 'badge ok' : 'badge warn'}>{m.reachable ? t('storage.reachable') : t('storage.unreachable')}</span>{' '}
                  {m.read_only && <span class="badge warn">{t('storage.readOnly')}</span>}
                </span>
              </div>
              <p class="muted">
                <PathText path={m.mount_point} root={root} />
                {m.free_bytes !== null && ` · ${t('storage.freeSize', { size: bytes(m.free_bytes) })}`}
                {m.has_credentials && ` · ${t('storage.withCredentials')}`}
              </p>
              {m.warning && (
                <p class="warn" role="alert" translate={false}>
                  {m.warning}
                </p>
              )}
              <div class="row">
                <Action label={t('storage.repair')} testId={`repair-${m.name}`} run={() => post(`/storage-mounts/${encodeURIComponent(m.name)}/repair`).then(refresh)} />
                <Action
                  label={t('storage.remove')}
                  kind="danger"
                  run={async () => {
                    if (!window.confirm(t('storage.removeConfirm', { name: m.name }))) return;
                    await del(`/storage-mounts/${encodeURIComponent(m.name)}`);
                    refresh();
                  }}
                />
              </div>
            </li>
          ))}
        </ul>
      </Section>
      <Section title={t('storage.add')}>
        <AddMount onAdded={refresh} />
      </Section>
    </>
  );
}

interface Share {
  name: string;
  comment: string;
}

function AddMount({ onAdded }: { onAdded: () => void }) {
  const root = useMediaRoot();
  const [protocol, setProtocol] = useState<'SMB' | 'NFS'>('SMB');
  const [host, setHost] = useState('');
  const [share, setShare] = useState('');
  const [name, setName] = useState('');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [shares, setShares] = useState<Share[] | null>(null);
  const [listing, setListing] = useState<string | null>(null);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState(false);

  const listShares = async () => {
    setListing(t('storage.readingShares'));
    setShares(null);
    try {
      const r = await get<{ shares: Share[] }>(`/storage-mounts/shares?host=${encodeURIComponent(host.trim())}`);
      setShares(r.shares);
      setListing(r.shares.length ? null : t('storage.noShares'));
    } catch (err) {
      setListing((err as Error).message);
    }
  };

  const submit = async () => {
    setBusy(true);
    setMessage(null);
    try {
      const body: Record<string, unknown> = { protocol, host: host.trim(), name: name.trim() };
      if (protocol === 'NFS') body.export = share.trim();
      else {
        body.share = share.trim();
        if (username.trim()) body.credentials = { username: username.trim(), password };
      }
      const m = await post<Mount>('/storage-mounts', body);
      setPassword('');
      setMessage({ ok: !m.warning, text: m.warning ? t('storage.mountedBut', { warning: m.warning }) : t('storage.mountedAt', { name: m.name, path: relativeToMedia(m.mount_point, root) }) });
      onAdded();
    } catch (err) {
      setMessage({ ok: false, text: (err as Error).message });
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      class="form"
      data-testid="add-mount"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <label>
        {t('storage.protocol')}
        <select name="protocol" value={protocol} onChange={(e) => setProtocol((e.target as HTMLSelectElement).value as 'SMB' | 'NFS')}>
          <option value="SMB">{t('storage.smb')}</option>
          <option value="NFS">NFS</option>
        </select>
      </label>
      <label>
        {t('storage.host')}
        <input name="host" required value={host} placeholder="nas.local" onInput={(e) => setHost((e.target as HTMLInputElement).value)} />
      </label>
      {protocol === 'SMB' && (
        <div class="row">
          <button type="button" disabled={!host.trim()} onClick={() => void listShares()}>
            {t('storage.listShares')}
          </button>
          {listing && (
            <span class="muted" role="status">
              {listing}
            </span>
          )}
          {shares?.map((s) => (
            <button
              type="button"
              key={s.name}
              class={s.name === share ? 'primary' : ''}
              title={s.comment}
              onClick={() => {
                setShare(s.name);
                if (!name) setName(s.name);
              }}
            >
              {s.name}
            </button>
          ))}
        </div>
      )}
      <label>
        {protocol === 'SMB' ? t('storage.share') : t('storage.export')}
        <input name="share" required value={share} placeholder={protocol === 'SMB' ? t('storage.sharePlaceholder') : t('storage.exportPlaceholder')} onInput={(e) => setShare((e.target as HTMLInputElement).value)} />
      </label>
      <label>
        {t('storage.name')}
        <input name="name" required value={name} placeholder="nas" onInput={(e) => setName((e.target as HTMLInputElement).value)} />
      </label>
      {protocol === 'SMB' && (
        <>
          <label>
            {t('storage.user')}
            <input name="username" autocomplete="off" value={username} onInput={(e) => setUsername((e.target as HTMLInputElement).value)} />
          </label>
          <label>
            {t('storage.password')}
            <input name="password" type="password" autocomplete="new-password" value={password} onInput={(e) => setPassword((e.target as HTMLInputElement).value)} />
          </label>
        </>
      )}
      {message && (
        <p class={message.ok ? 'ok' : 'error'} role={message.ok ? 'status' : 'alert'}>
          {message.text}
        </p>
      )}
      <button type="submit" class="primary" disabled={busy}>
        {busy ? t('storage.mounting') : t('storage.mount')}
      </button>
    </form>
  );
}
