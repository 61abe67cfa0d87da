import { reasonText } from '../../shared/reasons.js';

/** What a worker's transcode is for: the disc kinds Ripwerk compresses. */
export type Situation = 'dvd' | 'bluray' | 'uhd';

interface Choice {
  preset: string;
  /** The encoder family the preset needs; software presets need none. */
  family: 'nvenc' | 'qsv' | 'vce' | null;
}

const FAMILY_TEXT: Record<string, string> = { nvenc: 'NVIDIA NVENC', qsv: 'Intel Quick Sync', vce: 'AMD VCE (presets named VCN)' };

/** DVD and Blu-ray: 1080p at most, hardware first where the family is reported, then software. */
const FULL_HD: Choice[] = [
  { preset: 'H.265 NVENC 1080p', family: 'nvenc' },
  { preset: 'H.265 QSV 1080p', family: 'qsv' },
  { preset: 'H.265 VCN 1080p', family: 'vce' },
  { preset: 'H.265 MKV 1080p30', family: null },
  { preset: 'H.264 MKV 1080p30', family: null },
  { preset: 'Fast 1080p30', family: null },
];

/**
 * The fixed, ordered preset lists per situation (real names of HandBrake's built-in presets): the
 * hardware encoders first (each only where the worker reports its family), then software. vaapi and
 * the media-framework family (MF) are never recommended: their presets exist in every build's list
 * but do not run on the Linux workers Ripwerk targets.
 */
export const PRESET_CHOICES: Record<Situation, Choice[]> = {
  uhd: [
    { preset: 'H.265 NVENC 2160p 4K', family: 'nvenc' },
    { preset: 'H.265 QSV 2160p 4K', family: 'qsv' },
    { preset: 'H.265 VCN 2160p 4K', family: 'vce' },
    { preset: 'H.265 MKV 2160p60 4K', family: null },
    { preset: 'Fast 2160p60 4K HEVC', family: null },
  ],
  bluray: FULL_HD,
  // Not the 576p25 presets: their peak frame rate of 25 drops frames of an NTSC DVD (29.97 fps, checked
  // with HandBrakeCLI 1.6.1); the 1080p30 ones never upscale, so a DVD keeps its resolution and rate.
  dvd: FULL_HD,
};

export interface Recommendation {
  preset: string | null;
  /** Why, in English words. */
  reason: string;
  /** The same as a code of shared/reasons.ts, for a client that words it in its own language. */
  reason_code: 'presetWhyFamily' | 'presetWhySoftwareNoHardwarePreset' | 'presetWhySoftware' | 'presetWhyNoneKnown' | 'presetWhyNoPresets';
  /** `family`, `presets`; `skipped`: the better presets the worker does not know ("" for none). */
  reason_params: Record<string, string>;
}

/** The first preset of the situation's list that the worker knows and whose encoder family it reports. */
export function recommendPreset(situation: Situation, known: ReadonlySet<string>, families: readonly string[]): Recommendation {
  const skipped: string[] = [];
  for (const choice of PRESET_CHOICES[situation]) {
    if (choice.family && !families.includes(choice.family)) continue;
    if (!known.has(choice.preset)) {
      skipped.push(choice.preset);
      continue;
    }
    const code = choice.family ? 'presetWhyFamily' : families.some((f) => f in FAMILY_TEXT) ? 'presetWhySoftwareNoHardwarePreset' : 'presetWhySoftware';
    const params = { family: choice.family ? FAMILY_TEXT[choice.family] : '', skipped: skipped.join(', ') };
    return { preset: choice.preset, reason: `${reasonText(code, params, 'en') ?? code}${skipped.length ? `; it does not know ${params.skipped}` : ''}`, reason_code: code, reason_params: params };
  }
  const params = { presets: PRESET_CHOICES[situation].map((c) => c.preset).join(', '), skipped: '' };
  const code = known.size ? 'presetWhyNoneKnown' : 'presetWhyNoPresets';
  return { preset: null, reason: reasonText(code, params, 'en') ?? code, reason_code: code, reason_params: params };
}
