import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { get } from './api.js';
import { DrivesPage } from './pages/drives.js';
import { JobsPage } from './pages/jobs.js';
import { MetadataPage } from './pages/metadata.js';
import { StoragePage } from './pages/storage.js';
import { SystemPage } from './pages/system.js';
import { Wizard } from './pages/wizard.js';
import { WorkersPage } from './pages/workers.js';

const PAGES: { hash: string; label: string; view: () => preact.JSX.Element }[] = [
  { hash: '#/laufwerke', label: 'Laufwerke', view: DrivesPage },
  { hash: '#/auftraege', label: 'Aufträge', view: JobsPage },
  { hash: '#/metadaten', label: 'Metadaten', view: MetadataPage },
  { hash: '#/worker', label: 'Worker', view: WorkersPage },
  { hash: '#/speicher', label: 'Speicher', view: StoragePage },
  { hash: '#/system', label: 'System', view: SystemPage },
];

function useHash(): string {
  const [hash, setHash] = useState(location.hash || PAGES[0].hash);
  useEffect(() => {
    const on = () => setHash(location.hash || PAGES[0].hash);
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return hash;
}

function App() {
  const hash = useHash();
  const [setup, setSetup] = useState<{ complete: boolean } | null>(null);
  useEffect(() => {
    get<{ complete: boolean }>('/setup').then(setSetup, () => setSetup({ complete: true }));
  }, []);
  const page = PAGES.find((p) => p.hash === hash) ?? PAGES[0];
  const View = page.view;
  return (
    <>
      <header class="top">
        <a class="brand" href="#/laufwerke">
          Ripwerk
        </a>
        <nav aria-label="Bereiche">
          {PAGES.map((p) => (
            <a key={p.hash} href={p.hash} aria-current={p === page ? 'page' : undefined}>
              {p.label}
            </a>
          ))}
        </nav>
      </header>
      <main>{setup && !setup.complete ? <Wizard onDone={() => setSetup({ complete: true })} /> : <View />}</main>
    </>
  );
}

const root = document.getElementById('app')!;
// The static "loading" text goes; Preact renders into the emptied container.
root.textContent = '';
render(<App />, root);
