/**
 * The wording of the API's refusals that carry a code (HttpError's `code`, sent in the header
 * Ripwerk-Reason with its parameters in Ripwerk-Reason-Params): German and English, once, for both
 * the server and the web UI. The server answers a coded refusal's plain-text body in German when the
 * client's Accept-Language prefers German (coordinator/http/errors.ts); the UI words the code in its
 * own language (ui/src/api.ts). A refusal without a code keeps its English text.
 */

export type ReasonLang = 'de' | 'en';
export type ReasonParams = Record<string, string | number>;

export const REASONS = {
  presetUnknown: {
    de: 'Das Preset „{preset}“ steht in keiner Preset-Liste der Worker, die online sind ({workers}). Empfohlen: „{recommendation}“.',
    en: 'The preset “{preset}” is in no preset list of the online workers ({workers}). Recommended: “{recommendation}”.',
  },
  presetUnknownOffline: {
    de: 'Das Preset „{preset}“ steht in keiner der zuletzt gemeldeten Preset-Listen ({workers}); gerade ist kein Worker online, der es bestätigen könnte.',
    en: 'The preset “{preset}” is in none of the preset lists reported last ({workers}); no worker is online now to confirm it.',
  },
  presetNoLists: {
    de: 'Das Preset „{preset}“ lässt sich nicht prüfen: Noch kein Worker hat seine Preset-Liste gemeldet, darum gelten nur die eingebauten Preset-Namen von HandBrake.',
    en: 'The preset “{preset}” cannot be checked: no worker has reported its preset list yet, so only HandBrake’s built-in preset names count.',
  },
  keydbEmpty: {
    de: 'Keine KEYDB-Einträge gefunden: Die Datei hat keinen Disc-Eintrag und keine Schlüsselzeile. Die installierte KEYDB.cfg bleibt.',
    en: 'No KEYDB entries found: the file has no disc entry and no key line. The installed KEYDB.cfg is kept.',
  },
  tmdbKeyRefused: {
    de: 'TMDB nimmt den Schlüssel nicht an ({answer}). Der gespeicherte Schlüssel bleibt.',
    en: 'TMDB does not accept the key ({answer}). The stored key is kept.',
  },
  omdbKeyRefused: {
    de: 'OMDb nimmt den Schlüssel nicht an ({answer}). Der gespeicherte Schlüssel bleibt.',
    en: 'OMDb does not accept the key ({answer}). The stored key is kept.',
  },
  keyCheckUnreachable: {
    de: 'Nicht gespeichert: {service} war nicht erreichbar, um den Schlüssel zu prüfen ({reason}). Bitte später noch einmal speichern.',
    en: 'Not saved: {service} could not be reached to check the key ({reason}). Please save again later.',
  },
  mediaServerRefused: {
    de: 'Der Medienserver ({kind}) unter {address} lehnt ab: {answer}. Adresse und Schlüssel prüfen; nichts wurde gespeichert.',
    en: 'The media server ({kind}) at {address} refused: {answer}. Check the address and the key; nothing was saved.',
  },
  mediaServerUnreachable: {
    de: 'Der Medienserver ({kind}) unter {address} war nicht erreichbar ({reason}). Nichts wurde gespeichert; bitte speichern, wenn er läuft.',
    en: 'The media server ({kind}) at {address} could not be reached ({reason}). Nothing was saved; save again when it runs.',
  },
  jobNotFound: {
    de: 'Es gibt keinen Auftrag mit der Kennung {id}.',
    en: 'There is no job with the id {id}.',
  },
  cancelNotActive: {
    de: 'Der Auftrag läuft nicht mehr (Status: {status}): Nur ein wartender, rippender oder komprimierender Auftrag lässt sich abbrechen.',
    en: 'The job is no longer running (status: {status}): only a waiting, ripping or compressing job can be canceled.',
  },
  retryTranscodeNotRetryable: {
    de: 'Nur ein fehlgeschlagener oder abgebrochener Auftrag lässt sich erneut komprimieren (dieser: {status}).',
    en: 'Only a failed or canceled job can be compressed again (this one: {status}).',
  },
  retryRipNotRetryable: {
    de: 'Nur ein fehlgeschlagener oder abgebrochener Auftrag lässt sich erneut rippen (dieser: {status}).',
    en: 'Only a failed or canceled job can be ripped again (this one: {status}).',
  },
  retryCarefulCd: {
    de: 'Ein Audio-CD-Auftrag lässt sich nicht sorgfältig neu lesen: cdparanoia prüft und wiederholt jedes Lesen ohnehin. Bitte ohne „sorgfältig“ erneut rippen.',
    en: 'An audio CD job cannot be read again carefully: cdparanoia checks and repeats every read anyway. Rip it again without “careful”.',
  },
  retryNoRawData: {
    de: 'Keine Rohdaten dieses Auftrags gefunden: Bitte erneut rippen.',
    en: 'No raw data of this job was found: rip it again instead.',
  },
  retryRawEmpty: {
    de: 'Der Rohdaten-Ordner {dir} enthält keine Videodateien: Bitte erneut rippen.',
    en: 'The raw folder {dir} holds no video files: rip it again instead.',
  },
  retryDriveUnknown: {
    de: 'Das Laufwerk {drive} dieses Auftrags ist nicht mehr bekannt.',
    en: 'The drive {drive} of this job is no longer known.',
  },
  retryNoDisc: {
    de: 'In {drive} liegt keine Disc: Bitte die Disc dieses Auftrags einlegen und es noch einmal versuchen.',
    en: 'There is no disc in {drive}: insert the disc of this job and try again.',
  },
  retryWrongDisc: {
    de: 'Die Disc in {drive} („{disc}“) ist nicht die Disc dieses Auftrags: Bitte jene einlegen und es noch einmal versuchen.',
    en: 'The disc in {drive} (“{disc}”) is not the disc of this job: insert that disc and try again.',
  },
  deleteActive: {
    de: 'Der Auftrag läuft noch: Bitte zuerst abbrechen.',
    en: 'The job is still running: cancel it first.',
  },
  correctionNoOutput: {
    de: 'Der Auftrag hat keinen Ausgabeordner, der umbenannt werden könnte.',
    en: 'The job has no output folder to rename.',
  },
  correctionNoFiles: {
    de: 'Der Auftrag kennt seine fertigen Dateien nicht (er wurde vor den Korrekturen fertig): Bitte den Ordner von Hand umbenennen.',
    en: 'The job does not know its finished files (it finished before corrections were possible): rename the folder by hand.',
  },
  correctionFolderGone: {
    de: 'Der Ausgabeordner {dir} wurde inzwischen verschoben oder gelöscht: Nichts wurde geändert.',
    en: 'The output folder {dir} was moved or deleted meanwhile: nothing was changed.',
  },
  correctionFileGone: {
    de: 'Die Datei {file} wurde inzwischen verschoben oder gelöscht: Nichts wurde geändert.',
    en: 'The file {file} was moved or deleted meanwhile: nothing was changed.',
  },
  correctionFolderTaken: {
    de: 'Einen Ordner „{name}“ gibt es in {dir} schon: Nichts wurde geändert.',
    en: 'A folder named “{name}” exists already in {dir}: nothing was changed.',
  },
  correctionFileTaken: {
    de: '{file} gibt es schon: Nichts wurde geändert.',
    en: '{file} exists already: nothing was changed.',
  },
  correctionOutside: {
    de: 'Der korrigierte Ordner {dir} führt über einen symbolischen Link aus dem Medienordner hinaus (oder ins Leere): Nichts wurde geändert.',
    en: 'The corrected folder {dir} leads out of the media folder through a symbolic link (or nowhere): nothing was changed.',
  },
  mountNameActive: {
    de: 'Eine Freigabe namens {name} ist schon eingebunden und erreichbar: Bitte einen anderen Namen wählen oder sie zuerst entfernen.',
    en: 'A storage mount named {name} is mounted and reachable: choose another name, or remove it first.',
  },
  mountInUse: {
    de: 'Die Freigabe {name} wird gebraucht: Ein laufender Auftrag schreibt unter {dir}. Bitte entfernen, wenn er fertig ist.',
    en: 'The storage mount {name} is in use: a running job writes below {dir}. Remove it when the job has ended.',
  },
  mountPointLink: {
    de: '{dir} ist ein symbolischer Link; ein Einhängepunkt muss ein einfacher Ordner im Medienordner sein.',
    en: '{dir} is a symbolic link; a mount point must be a plain folder in the media folder.',
  },
  mountPointFile: {
    de: '{dir} ist eine Datei: Bitte einen anderen Namen wählen.',
    en: '{dir} is a file: choose another name.',
  },
  mountPointNotEmpty: {
    de: 'In {dir} liegen schon Dateien, eine dort eingebundene Freigabe würde sie verdecken: Bitte einen anderen Namen wählen.',
    en: '{dir} already holds files that a share mounted there would hide: choose another name.',
  },
} as const satisfies Record<string, Record<ReasonLang, string>>;

export type ReasonCode = keyof typeof REASONS;

/** A job status as a refusal names it, in words ("{status}" parameters). */
const STATUS_WORDS: Record<ReasonLang, Record<string, string>> = {
  de: { pending: 'wartet', processing: 'wird gerippt', transcoding: 'wird komprimiert', canceling: 'wird abgebrochen', completed: 'fertig', failed: 'fehlgeschlagen', canceled: 'abgebrochen' },
  en: { pending: 'waiting', processing: 'being ripped', transcoding: 'being compressed', canceling: 'being canceled', completed: 'done', failed: 'failed', canceled: 'canceled' },
};

export function isReasonCode(code: string): code is ReasonCode {
  return Object.hasOwn(REASONS, code);
}

/** The refusal of `code` in `lang` with its parameters filled in; null for a code the catalogue lacks. */
export function reasonText(code: string, params: ReasonParams, lang: ReasonLang): string | null {
  if (!isReasonCode(code)) return null;
  return REASONS[code][lang].replace(/\{(\w+)\}/g, (m, name: string) => {
    if (!Object.hasOwn(params, name)) return m;
    const value = String(params[name]);
    return name === 'status' ? (STATUS_WORDS[lang][value] ?? value) : value;
  });
}
