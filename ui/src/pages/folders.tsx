import { useEffect, useRef, useState } from 'preact/hooks';
import { get, post, type BrowseListing } from '../api.js';
import { t } from '../i18n/index.js';
import { PathText } from '../components.js';
import { absoluteInMedia, relativeToMedia } from '../media-path.js';

/** The target folder: typed, or picked in a browser of the media root with "new folder". */
export function FolderPicker({ value, onChange, root }: { value: string; onChange(v: string): void; root: string | null }) {
  const [open, setOpen] = useState(false);
  const [listing, setListing] = useState<BrowseListing | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [newName, setNewName] = useState('');
  // What is typed, relative to the media root; taken anew when the folder is set from outside (a quick
  // pick, the browser) or the media root becomes known, never while it only echoes what was typed.
  const [typed, setTyped] = useState(relativeToMedia(value, root));
  const shownRoot = useRef(root);
  useEffect(() => {
    if (shownRoot.current !== root || absoluteInMedia(typed, root) !== value) setTyped(relativeToMedia(value, root));
    shownRoot.current = root;
  }, [value, root]);

  const load = async (p: string | null) => {
    setError(null);
    try {
      setListing(await get<BrowseListing>(`/browse${p ? `?path=${encodeURIComponent(p)}` : ''}`));
    } catch (err) {
      setError((err as Error).message);
    }
  };
  useEffect(() => {
    if (open) void load(value || root);
  }, [open]);

  return (
    <div class="picker">
      <label>
        {t('folder.target')}
        <span class="path-input">
          {root && <span class="muted" aria-hidden="true">{t('media.rootPrefix')}</span>}
          <input
            value={typed}
            onInput={(e) => {
              const v = (e.target as HTMLInputElement).value;
              setTyped(v);
              onChange(absoluteInMedia(v, root));
            }}
            data-testid="target-dir"
          />
        </span>
      </label>
      <button type="button" onClick={() => setOpen(!open)} aria-expanded={open}>
        {open ? t('folder.close') : t('folder.open')}
      </button>
      {open && (
        <div class="browser" data-testid="folder-browser">
          {error && <p class="error">{error}</p>}
          {listing && (
            <>
              <p class="muted">
                <PathText path={listing.path} root={root} />
              </p>
              <ul>
                {listing.parent && (
                  <li>
                    <button type="button" class="link" onClick={() => void load(listing.parent)}>
                      {t('folder.up')}
                    </button>
                  </li>
                )}
                {listing.entries
                  .filter((e) => e.type === 'dir')
                  .map((e) => (
                    <li key={e.name}>
                      <button type="button" class="link" onClick={() => void load(`${listing.path}/${e.name}`)}>
                        📁 {e.name}
                      </button>
                    </li>
                  ))}
              </ul>
              <div class="row">
                <button type="button" class="primary" onClick={() => (onChange(listing.path), setOpen(false))}>
                  {t('folder.take')}
                </button>
                <input aria-label={t('folder.new')} placeholder={t('folder.newPlaceholder')} value={newName} onInput={(e) => setNewName((e.target as HTMLInputElement).value)} />
                <button
                  type="button"
                  disabled={!newName.trim()}
                  onClick={async () => {
                    try {
                      const made = await post<{ path: string }>('/browse/mkdir', { path: `${listing.path}/${newName.trim()}` });
                      setNewName('');
                      await load(made.path);
                    } catch (err) {
                      setError((err as Error).message);
                    }
                  }}
                >
                  {t('folder.create')}
                </button>
              </div>
            </>
          )}
        </div>
      )}
    </div>
  );
}
