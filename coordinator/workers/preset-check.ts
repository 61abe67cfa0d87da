import { SETTING_DEFAULTS } from '../system/settings-store.js';
import { HANDBRAKE_BUILTIN_PRESETS } from './handbrake-builtin-presets.js';
import { PRESET_CHOICES, recommendPreset } from './preset-recommendation.js';

/** A worker as the preset check sees it: whether it is online and the presets it reported last. */
export interface PresetLists {
  name: string;
  online: boolean;
  presets: string[];
  encoders: string[];
}

/** A refused preset: the English reason, and the code and parameters the web UI words it by. */
export interface PresetRefusal {
  text: string;
  code: 'presetUnknown' | 'presetUnknownOffline' | 'presetNoLists';
  params: Record<string, string>;
}

/** The names Ripwerk itself knows to be HandBrake's built-in presets (HandBrakeCLI 1.6.1's list, the recommendation lists, the default). */
export function builtInPresets(): Set<string> {
  return new Set([SETTING_DEFAULTS.transcodePreset, ...HANDBRAKE_BUILTIN_PRESETS, ...Object.values(PRESET_CHOICES).flatMap((list) => list.map((c) => c.preset))]);
}

/**
 * Why a transcode preset may not be saved, or null (issue 38: a typo was saved, and the next job
 * failed after its rip). The preset must be in the list an online worker reports (HandBrakeCLI
 * --preset-list). With no worker online, the lists they reported last decide; with no list at all,
 * only the built-in names Ripwerk knows pass. The reason names the recommendation.
 */
export function presetRefusal(preset: string, workers: PresetLists[]): PresetRefusal | null {
  const online = workers.filter((w) => w.online && w.presets.length > 0);
  if (online.length > 0) {
    if (online.some((w) => w.presets.includes(preset))) return null;
    const names = online.map((w) => w.name).join(', ');
    const recommended = recommendPreset('bluray', new Set(online[0].presets), online[0].encoders).preset ?? '';
    return {
      code: 'presetUnknown',
      params: { preset, workers: names, recommendation: recommended },
      text: `transcodePreset "${preset}" is in no online worker's preset list (${names})${recommended ? `; recommended: "${recommended}"` : ''}`,
    };
  }
  const reported = workers.filter((w) => w.presets.length > 0);
  if (reported.length > 0) {
    if (reported.some((w) => w.presets.includes(preset))) return null;
    const names = reported.map((w) => w.name).join(', ');
    return {
      code: 'presetUnknownOffline',
      params: { preset, workers: names },
      text: `transcodePreset "${preset}" is in none of the preset lists the workers reported last (${names}); no worker is online to ask now`,
    };
  }
  if (builtInPresets().has(preset)) return null;
  return {
    code: 'presetNoLists',
    params: { preset },
    text: `transcodePreset "${preset}" cannot be checked: no worker has reported its preset list yet, so only HandBrake's built-in preset names are taken (HandBrakeCLI --preset-list)`,
  };
}
