// The list every store-level and above-the-store suite runs through.

import { postgresHarness } from './postgres.js';
import { sqliteHarness } from './sqlite.js';
import type { StoreHarness } from './store-harness.js';

export const storeHarnesses: StoreHarness[] = [sqliteHarness, postgresHarness];
