// The Store conformance suite against SQLite (a real temp file per test).

import { runStoreConformance } from './conformance/index.js';
import { sqliteHarness } from './harness/sqlite.js';

runStoreConformance(sqliteHarness);
