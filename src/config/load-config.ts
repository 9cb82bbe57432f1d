// Finds and loads `mailroom.config.js` / `.mjs` (or `.ts` when tsx is installed), takes its
// default export (defineConfig(...) or a plain object) and validates it, so a bad config
// fails at start with a ConfigError naming the key.

import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError } from '../core/errors.js';
import type { MailroomConfig } from './define-config.js';
import { validateConfig } from './validate-config.js';

/** Looked for in this order in the working directory when no path is given. */
export const DEFAULT_CONFIG_FILES: readonly string[] = ['mailroom.config.js', 'mailroom.config.mjs', 'mailroom.config.ts'];

export interface LoadConfigOptions {
  /** An explicit config file (`--config`); relative to `cwd`. A missing file is an error. */
  readonly path?: string;
  /** Where to look for the default file names. */
  readonly cwd: string;
  /** Refuse a config whose sources' secrets are unset or invalid (see validateConfig). @default true */
  readonly requireSourceSecrets?: boolean;
}

/** Each import gets a fresh URL so a process that loads a config twice sees edits. */
let loadSequence = 0;

/**
 * The config file's path: `path` resolved against `cwd`, or the first default file name
 * present in `cwd`, or null when there is none.
 * @throws ConfigError when an explicit `path` does not exist.
 */
export function findConfigFile(options: LoadConfigOptions): string | null {
  if (options.path !== undefined) {
    const file = resolve(options.cwd, options.path);
    if (!existsSync(file) || !statSync(file).isFile()) throw new ConfigError('--config', `no config file at ${file}`);
    return file;
  }
  for (const name of DEFAULT_CONFIG_FILES) {
    const file = resolve(options.cwd, name);
    if (existsSync(file)) return file;
  }
  return null;
}

/**
 * Load and validate the config; null when no path was given and no default file exists.
 * Relative paths inside it (task modules, exec cwd) resolve against the file's directory.
 * @throws ConfigError naming the bad key, or `config` when the file cannot be loaded.
 * @example const config = await loadConfig({ path: flags.config, cwd: process.cwd() });
 */
export async function loadConfig(options: LoadConfigOptions): Promise<MailroomConfig | null> {
  const file = findConfigFile(options);
  if (file === null) return null;
  const exported = await importConfigModule(file);
  return validateConfig(exported, { baseDir: dirname(file), requireSourceSecrets: options.requireSourceSecrets });
}

async function importConfigModule(file: string): Promise<unknown> {
  loadSequence += 1;
  const url = `${pathToFileURL(file).href}?mailroom-load=${loadSequence}`;
  let module: { default?: unknown };
  try {
    module = file.endsWith('.ts') ? await importTypeScript(url) : ((await import(url)) as { default?: unknown });
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError('config', `could not load ${file}: ${(error as Error)?.message ?? String(error)}`);
  }
  if (module.default === undefined) {
    throw new ConfigError('config', `${file} has no default export (export default defineConfig({ ... }))`);
  }
  return module.default;
}

/** Node 20 cannot import TypeScript; tsx can, when the project has it installed. */
async function importTypeScript(url: string): Promise<{ default?: unknown }> {
  let tsImport: (specifier: string, parent: string) => Promise<unknown>;
  try {
    const api = (await import('tsx/esm/api' as string)) as { tsImport: typeof tsImport };
    tsImport = api.tsImport;
  } catch {
    throw new ConfigError('config', 'a .ts config needs the tsx package installed; or write mailroom.config.mjs');
  }
  const module = (await tsImport(url, import.meta.url)) as { default?: unknown };
  return module;
}
