import path from 'node:path';
import type { AgentConfig } from '../../shared/config.js';
import type { Capabilities } from '../../shared/protocol.js';
import { findLibdvdcss } from '../keys/libdvdcss.js';
import { makemkvRipper, openDvdRipper, probeTool, type Ripper } from './rippers.js';
import { encoderFamilies } from './handbrake-parser.js';
import { handbrakeEncoders, handbrakePresetList } from './handbrake-runner.js';

const ENCODER_PROBE_TIMEOUT_MS = 10_000;

/** The transcoder's version line, its encoder families and presets; a failing probe leaves software only. */
async function probeEncoder(handbrakeCli: string): Promise<{ version: string | null; encoders: string[]; presets: NonNullable<Capabilities['presets']> }> {
  const version = await probeTool(handbrakeCli, ['--version']);
  if (version === null) return { version, encoders: [], presets: [] };
  const [encoders, presets] = await Promise.all([
    handbrakeEncoders(handbrakeCli, { timeoutMs: ENCODER_PROBE_TIMEOUT_MS }).then(encoderFamilies, () => ['software']),
    handbrakePresetList(handbrakeCli, { timeoutMs: ENCODER_PROBE_TIMEOUT_MS }).catch(() => []),
  ]);
  return { version, encoders: encoders.length ? encoders : ['software'], presets };
}

/** Finds which tools this host has and which rip backend it uses. A native worker looks for the encoder alone. */
export async function probeCapabilities(config: AgentConfig): Promise<{ capabilities: Capabilities; ripper: Ripper | null }> {
  if (config.native) {
    const encoder = await probeEncoder(config.handbrakeCli);
    return {
      capabilities: { encoders: encoder.encoders, presets: encoder.presets, tools: { HandBrakeCLI: encoder.version }, key_source: 'none', schluessel: 0, rip_backend: 'none', transcode_only: true, native: true },
      ripper: null,
    };
  }
  const [makemkv, encoder, lsdvd, dvdbackup, ffmpeg, abcde, cdparanoia, libdvdcss] = await Promise.all([
    probeTool(config.makemkvcon, ['--version']).then((v) => (v === null ? null : v || 'makemkvcon')),
    probeEncoder(config.handbrakeCli),
    probeTool('lsdvd', ['-V']),
    probeTool('dvdbackup', ['--version']),
    probeTool('ffmpeg', ['-version']),
    probeTool(config.abcde, ['-v']),
    probeTool('cdparanoia', ['-V']),
    findLibdvdcss(),
  ]);
  const backend: Capabilities['rip_backend'] = makemkv !== null ? 'makemkv' : lsdvd !== null && dvdbackup !== null && ffmpeg !== null ? 'open-dvd' : 'none';
  const capabilities: Capabilities = {
    encoders: encoder.encoders,
    presets: encoder.presets,
    tools: { makemkvcon: makemkv, HandBrakeCLI: encoder.version, lsdvd, dvdbackup, ffmpeg, abcde, cdparanoia, libdvdcss },
    key_source: backend === 'makemkv' ? 'makemkv' : backend === 'open-dvd' ? (libdvdcss ? 'libdvdread with libdvdcss' : 'libdvdread (unencrypted DVDs only)') : 'none',
    schluessel: 0,
    rip_backend: backend,
    transcode_only: config.drives.length === 0 && !config.drivesAuto,
    native: false,
  };
  const ripper = backend === 'makemkv' ? makemkvRipper(config.makemkvcon, path.dirname(config.makemkvDataDir), () => capabilities.schluessel) : backend === 'open-dvd' ? openDvdRipper() : null;
  return { capabilities, ripper };
}
