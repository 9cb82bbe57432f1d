// The Store conformance suite against PostgreSQL (a fresh schema per test over PG_URL;
// skipped loudly when the server is unreachable, failing under CI=true).

import { runStoreConformance } from './conformance/index.js';
import { postgresHarness } from './harness/postgres.js';

runStoreConformance(postgresHarness);
