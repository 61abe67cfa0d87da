import { render } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { get } from './api.js';
import { PageName } from './components.js';
import { initLang, LANGS, lang, setLang, t, type Lang, type MessageKey } from './i18n/index.js';
import { DrivesPage } from './pages/drives.js';
import { HistoryPage } from './pages/history.js';
import { JobsPage } from './pages/jobs.js';
import { MetadataPage } from './pages/metadata.js';
import { StoragePage } from './pages/storage.js';
import { SystemPage } from './pages/system.js';
import { SetupBanner, Wizard } from './pages/wizard.js';
import { WorkersPage } from './pages/workers.js';

const PAGES: { hash: string; label: MessageKey; view: () => preact.JSX.Element }[] = [
  { hash: '#/laufwerke', label: 'nav.drives', view: DrivesPage },
  { hash: '#/auftraege', label: 'nav.jobs', view: JobsPage },
  { hash: '#/verlauf', label: 'nav.history', view: HistoryPage },
  { hash: '#/metadaten', label: 'nav.metadata', view: MetadataPage },
  { hash: '#/worker', label: 'nav.workers', view: WorkersPage },
  { hash: '#/speicher', label: 'nav.storage', view: StoragePage },
  { hash: '#/system', label: 'nav.system', view: SystemPage },
];

function useHash(): string {
  // '' when the address has none (the start: the drives, or the setup while it is open).
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const on = () => setHash(location.hash);
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return hash;
}

/** DE | EN in the header: switches at once and is remembered in this browser. */
function LanguageSwitch({ onChange }: { onChange(l: Lang): void }) {
  return (
    <div class="lang" role="group" aria-label={t('app.language')}>
      {LANGS.map((l) => (
        <button key={l} type="button" lang={l} aria-pressed={l === lang()} data-testid={`lang-${l}`} onClick={() => onChange(l)}>
          {l.toUpperCase()}
        </button>
      ))}
    </div>
  );
}

function App() {
  const hash = useHash();
  const [, setShown] = useState<Lang>(lang());
  const switchLang = (l: Lang) => {
    setLang(l, true);
    setShown(l);
  };
  const [setup, setSetup] = useState<{ complete: boolean } | null>(null);
  useEffect(() => {
    get<{ complete: boolean }>('/setup').then(setSetup, () => setSetup({ complete: true }));
  }, []);
  // A page may carry a target after its name (#/metadaten/job/<id>).
  const page = PAGES.find((p) => hash === p.hash || hash.startsWith(`${p.hash}/`)) ?? PAGES[0];
  const View = page.view;
  // While setup is open it is the start page; the page links still lead to their pages (with a way back).
  const inSetup = setup !== null && !setup.complete && (hash === '' || hash === '#/einrichtung');
  // One main heading per page: the section named like the page is it; a page without one gets a hidden h1.
  const mainRef = useRef<HTMLElement>(null);
  const [ownH1, setOwnH1] = useState(true);
  useLayoutEffect(() => {
    const has = Boolean(mainRef.current?.querySelector('h1:not(.page-name)'));
    if (has === ownH1) setOwnH1(!has);
  });
  // A page's sections may come later (after their data): looked at again when main's content changes.
  useEffect(() => {
    const el = mainRef.current;
    if (!el) return;
    const observer = new MutationObserver(() => setOwnH1(!el.querySelector('h1:not(.page-name)')));
    observer.observe(el, { childList: true, subtree: true });
    return () => observer.disconnect();
  }, []);
  return (
    <>
      <a class="skip-link" href="#main" onClick={(e) => {
        e.preventDefault();
        mainRef.current?.focus();
      }}>
        {t('app.skipToContent')}
      </a>
      <header class="top">
        <a class="brand" href="#/laufwerke">
          Ripwerk
        </a>
        <LanguageSwitch onChange={switchLang} />
        <nav aria-label={t('nav.label')}>
          {PAGES.map((p) => (
            <a key={p.hash} href={p.hash} aria-current={p === page && !inSetup ? 'page' : undefined}>
              {t(p.label)}
            </a>
          ))}
        </nav>
      </header>
      <main id="main" tabIndex={-1} ref={mainRef}>
        {inSetup ? (
          <Wizard onDone={() => setSetup({ complete: true })} />
        ) : (
          <PageName.Provider value={t(page.label)}>
            {ownH1 && <h1 class="page-name sr-only">{t(page.label)}</h1>}
            {setup && !setup.complete && <SetupBanner />}
            <View />
          </PageName.Provider>
        )}
      </main>
    </>
  );
}

initLang();
const root = document.getElementById('app')!;
// The static "loading" text goes; Preact renders into the emptied container.
root.textContent = '';
render(<App />, root);
