import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bdmtLanguage, decodeBdmt, parseBdmtTitle, pickBdmtTitle } from '../../../../agent/disc/bdmt.js';
import { chooseLabel, displayTitle } from '../../../../agent/disc/identify.js';
import { isGenericLabel, titleFromLabel } from '../../../../agent/disc/disc-title.js';
import { sampleText } from '../../../fixtures/tools-samples.js';

const sample = sampleText('disc-bdmt_eng.xml');

function bdmt(inner: string, open = '<disclib xmlns="urn:BDA:bdmv;disclib" xmlns:di="urn:BDA:bdmv;discinfo">', close = '</disclib>'): string {
  return `<?xml version="1.0" encoding="utf-8"?>\n${open}${inner}${close}`;
}

describe('bdmt parser', () => {
  it('reads the disc title of the sample file', () => {
    assert.equal(parseBdmtTitle(sample), 'My Movie (2003) - Disc 1');
  });

  it('matches element names whatever their namespace prefix or default namespace', () => {
    assert.equal(parseBdmtTitle(bdmt('<di:discinfo><di:title><di:name>Heat</di:name></di:title></di:discinfo>')), 'Heat');
    assert.equal(
      parseBdmtTitle(bdmt('<bd:discinfo><bd:title><bd:name>Heat</bd:name></bd:title></bd:discinfo>', '<bd:disclib xmlns:bd="urn:BDA:bdmv;discinfo">', '</bd:disclib>')),
      'Heat',
    );
    assert.equal(parseBdmtTitle(bdmt('<discinfo xmlns="urn:example:odd"><title><name>Heat</name></title></discinfo>', '<disclib>')), 'Heat');
    assert.equal(parseBdmtTitle('<disclib><discinfo><title><name lang="de">  Die \n  Brücke </name></title></discinfo></disclib>'), 'Die Brücke');
  });

  it('answers null for placeholders, empty names, a missing title and broken XML', () => {
    assert.equal(parseBdmtTitle(bdmt('<di:discinfo><di:title><di:name>Blu-ray</di:name></di:title></di:discinfo>')), null);
    assert.equal(parseBdmtTitle(bdmt('<di:discinfo><di:title><di:name>BLURAY DISC</di:name></di:title></di:discinfo>')), null);
    assert.equal(parseBdmtTitle(bdmt('<di:discinfo><di:title><di:name>   </di:name></di:title></di:discinfo>')), null);
    assert.equal(parseBdmtTitle(bdmt('<di:discinfo><di:date>2010-06-15</di:date></di:discinfo>')), null);
    assert.equal(parseBdmtTitle('<disclib><discinfo><title><name>Heat</title></discinfo>'), null);
    assert.equal(parseBdmtTitle(''), null);
  });

  it('takes the language from the file name', () => {
    assert.equal(bdmtLanguage('bdmt_eng.xml'), 'eng');
    assert.equal(bdmtLanguage('BDMT_DEU.XML'), 'deu');
    assert.equal(bdmtLanguage('bdmt_en.xml'), null);
    assert.equal(bdmtLanguage('MYMOVIE_416x240.jpg'), null);
  });

  it('prefers English, else the first file by name, skipping placeholders', () => {
    const named = (name: string) => bdmt(`<di:discinfo><di:title><di:name>${name}</di:name></di:title></di:discinfo>`);
    assert.equal(
      pickBdmtTitle([
        { fileName: 'bdmt_deu.xml', xml: named('Der Film') },
        { fileName: 'bdmt_eng.xml', xml: named('The Film') },
      ]),
      'The Film',
    );
    assert.equal(
      pickBdmtTitle([
        { fileName: 'bdmt_fra.xml', xml: named('Le Film') },
        { fileName: 'bdmt_deu.xml', xml: named('Der Film') },
      ]),
      'Der Film',
    );
    assert.equal(
      pickBdmtTitle([
        { fileName: 'bdmt_eng.xml', xml: named('Blu-ray') },
        { fileName: 'bdmt_jpn.xml', xml: named('千と千尋の神隠し') },
      ]),
      '千と千尋の神隠し',
    );
    assert.equal(pickBdmtTitle([{ fileName: 'notes.xml', xml: named('Heat') }]), null);
    assert.equal(pickBdmtTitle([]), null);
  });

  it('decodes UTF-8 and UTF-16 files by their byte order mark', () => {
    const text = '<disclib><discinfo><title><name>Amélie</name></title></discinfo></disclib>';
    assert.equal(parseBdmtTitle(decodeBdmt(Buffer.from(text, 'utf8'))), 'Amélie');
    assert.equal(parseBdmtTitle(decodeBdmt(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, 'utf8')]))), 'Amélie');
    assert.equal(parseBdmtTitle(decodeBdmt(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]))), 'Amélie');
    assert.equal(parseBdmtTitle(decodeBdmt(Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, 'utf16le').swap16()]))), 'Amélie');
  });
});

describe('disc label to title', () => {
  const table: [string, string, number | null][] = [
    ['MY_MOVIE_2003', 'My Movie', 2003],
    ['THE_MATRIX', 'The Matrix', null],
    ['the_dark_knight', 'The Dark Knight', null],
    ['MY_MOVIE_2003_D1', 'My Movie', 2003],
    ['LOTR_FOTR_DISC_2', 'Lotr Fotr', null],
    ['LOTR_FOTR_DISC2', 'Lotr Fotr', null],
    ['AMELIE_WS', 'Amelie', null],
    ['HEAT_FS', 'Heat', null],
    ['HEAT_1995_WS_D2', 'Heat', 1995],
    ['2001_A_SPACE_ODYSSEY', '2001 A Space Odyssey', null],
    ['1917', '1917', null],
    ['BLADE_RUNNER_2049', 'Blade Runner', 2049],
    ['STAR_WARS_EPISODE_4', 'Star Wars Episode 4', null],
    ['AVATAR_3D', 'Avatar 3D', null],
    ['DISC_2', 'Disc 2', null],
    ['Amélie', 'Amélie', null],
    ['AME\u0301LIE', 'Amélie', null],
    ['千と千尋の神隠し', '千と千尋の神隠し', null],
    ['', '', null],
  ];
  for (const [label, title, year] of table) {
    it(`${JSON.stringify(label)} → ${JSON.stringify(title)}, ${year}`, () => {
      assert.deepEqual(titleFromLabel(label), { title, year });
    });
  }

  it('knows generic labels', () => {
    for (const label of ['DVD_VIDEO', 'BDROM', 'VIDEO_TS', 'LOGICAL_VOLUME_ID', '', '  ', 'LinuxUDF', 'dvd video']) assert.equal(isGenericLabel(label), true, label);
    for (const label of ['MY_MOVIE_2003', 'DVD_VIDEO_2', 'Heat']) assert.equal(isGenericLabel(label), false, label);
  });

  it('chooses the UDF logical volume id when it only extends the volume id, else the volume id, then ISO 9660, then the name', () => {
    assert.deepEqual(chooseLabel({ udfLogicalVolumeId: 'MY_MOVIE_2003', udfVolumeId: 'MY_MOVIE_2003', isoVolumeId: 'MY_MOVIE_2003' }, 'x'), {
      label: 'MY_MOVIE_2003',
      labelSource: 'udf-lvd',
    });
    assert.deepEqual(chooseLabel({ udfLogicalVolumeId: 'THE_LORD_OF_THE_RINGS_THE_FELLOWSHIP', udfVolumeId: 'THE_LORD_OF_THE_RINGS_THE_FEL' }, 'x'), {
      label: 'THE_LORD_OF_THE_RINGS_THE_FELLOWSHIP',
      labelSource: 'udf-lvd',
    });
    assert.deepEqual(chooseLabel({ udfLogicalVolumeId: '千と千尋の神隠し', udfVolumeId: 'SPIRITED_AWAY' }, 'x'), { label: 'SPIRITED_AWAY', labelSource: 'udf-pvd' });
    assert.deepEqual(chooseLabel({ udfLogicalVolumeId: '', udfVolumeId: 'HEAT' }, 'x'), { label: 'HEAT', labelSource: 'udf-pvd' });
    assert.deepEqual(chooseLabel({ udfLogicalVolumeId: 'LOGICAL_VOLUME_ID', udfVolumeId: 'LOGICAL_VOLUME_ID', isoVolumeId: 'HEAT' }, 'x'), {
      label: 'HEAT',
      labelSource: 'iso9660',
    });
    assert.deepEqual(chooseLabel({ udfLogicalVolumeId: 'DVD_VIDEO', udfVolumeId: 'DVD_VIDEO', isoVolumeId: 'DVD_VIDEO' }, 'x'), {
      label: 'DVD_VIDEO',
      labelSource: 'udf-lvd',
    });
    assert.deepEqual(chooseLabel({ isoVolumeId: 'CDROM_1' }, 'x'), { label: 'CDROM_1', labelSource: 'iso9660' });
    assert.deepEqual(chooseLabel({}, 'My_File'), { label: 'My_File', labelSource: 'name' });
  });

  it('shows the bdmt title, else the label, else the name for a generic label', () => {
    assert.deepEqual(displayTitle('MY_MOVIE_2003_D1', 'My Movie (2003) - Disc 1', 'file'), { title: 'My Movie (2003) - Disc 1', year: 2003 });
    assert.deepEqual(displayTitle('MY_MOVIE_2003_D1', null, 'file'), { title: 'My Movie', year: 2003 });
    assert.deepEqual(displayTitle('BDROM', 'Heat', 'heat_1995'), { title: 'Heat', year: 1995 });
    assert.deepEqual(displayTitle('DVD_VIDEO', null, 'Heat_1995'), { title: 'Heat', year: 1995 });
  });
});
