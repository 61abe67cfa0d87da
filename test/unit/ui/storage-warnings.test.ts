import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { uiModules } from '../../fixtures/ui-modules.js';

const GB = 1_000_000_000;
const target = (name: string, free: number | null, warning: boolean) => ({ name, path: `/m/${name}`, exists: true, total_bytes: 271 * GB, free_bytes: free, warning: warning ? 'less than 60 GB free' : null, mounted: false, network: false });

describe('storage warnings (issue 38)', () => {
  it('says one warning for the targets with the same free space, naming them all, in German and English', async () => {
    const m = await uiModules();
    const targets = [target('media', 38.8 * GB, true), target('movies', 38.8 * GB, true), target('series', 38.8 * GB, true), target('raw', 120 * GB, false), target('mount:nas', 67_100_000, true)];
    const groups = m.warningGroups(targets);
    assert.deepEqual(groups.map((g) => g.map((d) => d.name)), [['media', 'movies', 'series'], ['mount:nas']]);
    m.setLang('de');
    assert.equal(m.storageWarning(groups[0]), 'Achtung: Medien, Filme und Serien haben nur noch 38,8 GB frei (weniger als 60 GB).');
    assert.equal(m.storageWarning(groups[1]), 'Achtung: Netzlaufwerk nas hat nur noch 67,1 MB frei (weniger als 60 GB).');
    m.setLang('en');
    assert.equal(m.storageWarning(groups[0]), 'Warning: Media, Movies, and Series have only 38.8 GB free (less than 60 GB).');
  });

  it('keeps a share that is not there apart, each with its own warning', async () => {
    const m = await uiModules();
    const groups = m.warningGroups([target('mount:a', null, true), target('mount:b', null, true), target('movies', 10 * GB, true)]);
    assert.deepEqual(groups.map((g) => g.map((d) => d.name)), [['mount:a'], ['mount:b'], ['movies']]);
    const below = m.warningGroups([target('movies', null, true)]);
    m.setLang('de');
    assert.equal(m.storageWarning(groups[0]), 'Achtung: Netzlaufwerk a ist nicht eingebunden oder antwortet nicht.');
    assert.equal(m.storageWarning(below[0]), 'Achtung: das Netzlaufwerk von Filme ist nicht eingebunden oder antwortet nicht.');
  });
});
