import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { asMainTitle, folderName, movieFolderName, NO_BREAK_HYPHEN, NO_BREAK_SPACE, normaliseDiscLabel, safeName, seasonFolder, seriesFolderName, withCollisionSuffix } from '../../../shared/output-name.js';

const bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

describe('safeName', () => {
  it('keeps an ordinary title', () => {
    assert.equal(safeName('The Matrix'), 'The Matrix');
  });

  it('turns a colon into a dash with spaces', () => {
    assert.equal(safeName('Alien: Covenant'), 'Alien - Covenant');
    assert.equal(safeName('Mission:Impossible'), 'Mission - Impossible');
    assert.equal(safeName('Star Wars: Episode IV: A New Hope'), 'Star Wars - Episode IV - A New Hope');
  });

  it('turns a slash into a dash', () => {
    assert.equal(safeName('AC/DC Live'), 'AC-DC Live');
    assert.equal(safeName('Face/Off'), 'Face-Off');
  });

  it('turns double quotes into single quotes', () => {
    assert.equal(safeName('The "Best" Movie'), "The 'Best' Movie");
  });

  it('removes the other characters Windows refuses', () => {
    assert.equal(safeName('What? Why*'), 'What Why');
    assert.equal(safeName('<Tag> a|b'), 'Tag ab');
    assert.equal(safeName('Back\\Slash'), 'BackSlash');
  });

  it('removes control characters and collapses whitespace', () => {
    assert.equal(safeName('A\tB\nC\u0000D'), 'A B C D');
    assert.equal(safeName('  Too    many   spaces  '), 'Too many spaces');
  });

  it('removes trailing dots and spaces, and leading dots', () => {
    assert.equal(safeName('Movie...'), 'Movie');
    assert.equal(safeName('Movie . . '), 'Movie');
    assert.equal(safeName('.hidden'), 'hidden');
    assert.equal(safeName('...And Justice for All'), 'And Justice for All');
    assert.equal(safeName('Mr. Smith'), 'Mr. Smith');
  });

  it('keeps letters beyond ASCII in NFC form', () => {
    const decomposed = 'Ame\u0301lie und die Bru\u0308cke';
    const result = safeName(decomposed);
    assert.equal(result, 'Amélie und die Brücke');
    assert.equal(result, result.normalize('NFC'));
    assert.equal(safeName('千と千尋の神隠し'), '千と千尋の神隠し');
    assert.equal(safeName('Ærø Straße'), 'Ærø Straße');
  });

  it('avoids Windows device names', () => {
    for (const name of ['CON', 'PRN', 'AUX', 'NUL', 'COM1', 'COM9', 'LPT1', 'LPT9']) {
      assert.equal(safeName(name), `${name}_`);
    }
    assert.equal(safeName('con'), 'con_');
    assert.equal(safeName('Nul'), 'Nul_');
    assert.equal(safeName('CON.nfo'), 'CON_.nfo');
    assert.equal(safeName('COM10'), 'COM10');
    assert.equal(safeName('CONTACT'), 'CONTACT');
    assert.equal(safeName('Aux Armes'), 'Aux Armes');
  });

  it('caps at 200 UTF-8 bytes without splitting a character', () => {
    const ascii = safeName('a'.repeat(300));
    assert.equal(ascii.length, 200);
    const umlauts = safeName('ä'.repeat(150));
    assert.equal(bytes(umlauts), 200);
    assert.equal(umlauts, 'ä'.repeat(100));
    const odd = safeName(`x${'ä'.repeat(150)}`);
    assert.equal(odd, `x${'ä'.repeat(99)}`);
    assert.ok(bytes(odd) <= 200);
    const emoji = safeName('🎬'.repeat(60));
    assert.equal(emoji, '🎬'.repeat(50));
    assert.ok(!emoji.includes('\uFFFD'));
  });

  it('does not split a letter from its combining mark or an emoji sequence', () => {
    const family = '👨‍👩‍👧';
    const capped = safeName(`${'a'.repeat(195)}${family}`);
    assert.equal(capped, 'a'.repeat(195));
    const accented = safeName(`${'a'.repeat(198)}e\u0301\u0301`);
    assert.ok(bytes(accented) <= 200);
    assert.equal(accented, 'a'.repeat(198));
  });

  it('removes dots and spaces exposed at the end by the cap', () => {
    const result = safeName(`${'a'.repeat(198)} .bcd`);
    assert.equal(result, 'a'.repeat(198));
  });

  it('is never empty', () => {
    assert.equal(safeName(''), 'Unbenannt');
    assert.equal(safeName('   '), 'Unbenannt');
    assert.equal(safeName('...'), 'Unbenannt');
    assert.equal(safeName('???'), 'Unbenannt');
  });
});

describe('folderName', () => {
  it('builds Title (Year)', () => {
    assert.equal(folderName('The Matrix', 1999), 'The Matrix (1999)');
    assert.equal(folderName('The Matrix', '1999'), 'The Matrix (1999)');
    assert.equal(folderName('Alien: Covenant', 2017), 'Alien - Covenant (2017)');
  });

  it('gives the title alone without a usable year', () => {
    assert.equal(folderName('The Matrix'), 'The Matrix');
    assert.equal(folderName('The Matrix', null), 'The Matrix');
    assert.equal(folderName('The Matrix', ''), 'The Matrix');
    assert.equal(folderName('The Matrix', 'unknown'), 'The Matrix');
    assert.equal(folderName('The Matrix', 1999.5), 'The Matrix');
    assert.equal(folderName('The Matrix', 99), 'The Matrix');
  });

  it('never doubles a year already in brackets', () => {
    assert.equal(folderName('Movie (1999)', 1999), 'Movie (1999)');
    assert.equal(folderName('Movie(1999)', '1999'), 'Movie (1999)');
    assert.equal(folderName('Movie (1999)'), 'Movie (1999)');
  });

  it('lets the given year replace a different one in brackets', () => {
    assert.equal(folderName('Movie (1998)', 1999), 'Movie (1999)');
  });

  it('keeps a trailing number equal to the year: the metadata title is whole (issue 39)', () => {
    assert.equal(folderName('Godzilla 2000', 2000), 'Godzilla 2000 (2000)');
    assert.equal(folderName('Movie 1999', 1999), 'Movie 1999 (1999)');
  });

  it('keeps a trailing number that is a different year as part of the title', () => {
    assert.equal(folderName('Blade Runner 2049', 2017), 'Blade Runner 2049 (2017)');
    assert.equal(folderName('Movie1999', 1999), 'Movie1999 (1999)');
  });

  it('keeps the year when the title is very long', () => {
    const name = folderName('a'.repeat(300), 1999);
    assert.ok(name.endsWith(' (1999)'));
    assert.equal(bytes(name), 200);
  });

  it('uses the fallback name for an empty title', () => {
    assert.equal(folderName('', 1999), 'Unbenannt (1999)');
    assert.equal(folderName('(1999)', 1999), 'Unbenannt (1999)');
  });

  it('adds no "_" to a device name that carries a year', () => {
    assert.equal(folderName('Con', 1999), 'Con (1999)');
    assert.equal(folderName('Con'), 'Con_');
  });
});

describe('movieFolderName and seriesFolderName (issue 39)', () => {
  it('join a slash before a release tag the servers cut at, and make it a hyphen elsewhere', () => {
    assert.equal(movieFolderName('AC/DC: Let There Be Rock', 1980), 'ACDC - Let There Be Rock (1980)');
    assert.equal(movieFolderName('Face/Off', 1997), 'Face-Off (1997)');
    assert.equal(movieFolderName('Fahrenheit 9/11', 2004), 'Fahrenheit 9-11 (2004)');
    assert.equal(seriesFolderName('Batman/DC'), 'BatmanDC');
    assert.equal(folderName('AC/DC', 1980), 'AC-DC (1980)', 'album folders keep the plain rule');
    assert.equal(safeName('AC/DC'), 'AC-DC');
  });

  it('keep a title with sample or trailer from being read as an extra', () => {
    assert.equal(movieFolderName('Sample', 2020), `Sample${NO_BREAK_SPACE}(2020)`);
    assert.equal(movieFolderName('Sample', null), `Sample${NO_BREAK_SPACE}`);
    assert.equal(movieFolderName('Free Sample', 2018), `Free${NO_BREAK_SPACE}Sample${NO_BREAK_SPACE}(2018)`);
    assert.equal(movieFolderName('Crime-Scene', 2010), `Crime${NO_BREAK_HYPHEN}Scene (2010)`);
    assert.equal(movieFolderName('Shorts', null), `Shorts${NO_BREAK_SPACE}`);
    assert.equal(seriesFolderName('Sample'), `Sample${NO_BREAK_SPACE}`);
  });

  it('leave every other title as folderName makes it', () => {
    for (const [title, year] of [['Heat', 1995], ['Samples', 2001], ['Trailer Park Boys', 2006], ['Shorts', 2009], ['Alien: Covenant', 2017]] as const) {
      assert.equal(movieFolderName(title, year), folderName(title, year));
    }
    assert.equal(asMainTitle('The Sampler'), 'The Sampler');
  });
});

describe('withCollisionSuffix', () => {
  it('appends the first 8 characters of the job id', () => {
    assert.equal(
      withCollisionSuffix('The Matrix (1999)', '3f2b9c1e-7a4d-4e2f-9b1a-0c5d6e7f8a9b'),
      'The Matrix (1999) [3f2b9c1e]',
    );
  });

  it('takes a short id whole', () => {
    assert.equal(withCollisionSuffix('Movie', 'abc'), 'Movie [abc]');
  });

  it('refuses an empty id', () => {
    assert.throws(() => withCollisionSuffix('Movie', ''), RangeError);
  });
});

describe('seasonFolder', () => {
  it('pads to two digits', () => {
    assert.equal(seasonFolder(1), 'Season 01');
    assert.equal(seasonFolder(9), 'Season 09');
    assert.equal(seasonFolder(12), 'Season 12');
    assert.equal(seasonFolder(0), 'Season 00');
    assert.equal(seasonFolder(100), 'Season 100');
  });

  it('gives SNN to a series whose name Jellyfin would remove from Season NN (issue 39)', () => {
    assert.equal(seasonFolder(1, 'Breaking Bad'), 'Season 01');
    for (const series of ['On', 'S', 'Son', 'Sea', 'sea-son', '1', 'Se']) assert.equal(seasonFolder(1, series), 'S01', series);
    assert.equal(seasonFolder(0, '0'), 'S00');
    assert.equal(seasonFolder(100, '10'), 'S100');
    assert.equal(seasonFolder(2, '1'), 'Season 02', 'a name not in the folder name changes nothing');
  });

  it('refuses negative and fractional seasons', () => {
    assert.throws(() => seasonFolder(-1), RangeError);
    assert.throws(() => seasonFolder(1.5), RangeError);
    assert.throws(() => seasonFolder(Number.NaN), RangeError);
  });
});

describe('normaliseDiscLabel', () => {
  it('turns underscores into spaces and capitalises words', () => {
    assert.equal(normaliseDiscLabel('MY_TEST_MOVIE'), 'My Test Movie');
    assert.equal(normaliseDiscLabel('the_matrix'), 'The Matrix');
  });

  it('collapses spaces and underscores and trims', () => {
    assert.equal(normaliseDiscLabel('__THE___MATRIX  RELOADED_'), 'The Matrix Reloaded');
  });

  it('keeps digits', () => {
    assert.equal(normaliseDiscLabel('STAR_WARS_EPISODE_4'), 'Star Wars Episode 4');
    assert.equal(normaliseDiscLabel('2001_A_SPACE_ODYSSEY'), '2001 A Space Odyssey');
    assert.equal(normaliseDiscLabel('AVATAR_3D'), 'Avatar 3D');
    assert.equal(normaliseDiscLabel('MOVIE_DISC1'), 'Movie Disc1');
  });

  it('handles letters beyond ASCII', () => {
    assert.equal(normaliseDiscLabel('DIE_BRÜCKE'), 'Die Brücke');
    assert.equal(normaliseDiscLabel('ÄRGER_IM_PARADIES'), 'Ärger Im Paradies');
  });

  it('gives an empty text for an empty label', () => {
    assert.equal(normaliseDiscLabel(''), '');
    assert.equal(normaliseDiscLabel('___'), '');
  });
});
