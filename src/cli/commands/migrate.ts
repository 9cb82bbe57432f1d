// `mailroom migrate`: apply pending schema migrations (safe to run while serve/worker start:
// a concurrent migrator waits for the lock and finds nothing to do).

import { parseCommandArgs } from '../args.js';
import type { CommonOptions } from '../args.js';
import { printableStoreUrl } from '../../store/store-url.js';
import { withCliMailroom } from '../cli-mailroom.js';
import type { CliCommand } from '../command.js';
import { writeJson, writeLines } from '../output.js';

export interface MigrateOptions {
  readonly common: CommonOptions;
}

const migrate: CliCommand<MigrateOptions> = {
  name: 'migrate',
  summary: 'Create or upgrade the database schema',
  usage: `Usage: mailroom migrate [--db URL] [--json]

Applies every migration the database lacks, each in its own transaction. A database with
a migration that needs newer code than this Mailroom is refused (a newer one that declares
this version compatible is used). Safe to run while serve or worker start.

Options:
  --db URL        store URL (or MAILROOM_DB)
  --config PATH   config file (for its db)
  --json          print { "applied": [versions], "version": N }`,

  parse(argv) {
    return { common: parseCommandArgs('migrate', argv, {}).common };
  },

  async run(options, io) {
    return withCliMailroom(options.common, io, { migrate: false, checkSchema: false }, async ({ mr, db }) => {
      const result = await mr.store.migrate();
      if (options.common.json) {
        writeJson(io.stdout, { applied: result.applied, version: result.version });
      } else if (result.applied.length === 0) {
        writeLines(io.stdout, `${printableStoreUrl(db)} is up to date at schema version ${result.version}.`);
      } else {
        writeLines(io.stdout, `Applied migration${result.applied.length === 1 ? '' : 's'} ${result.applied.join(', ')} to ${printableStoreUrl(db)}; schema version ${result.version}.`);
      }
      return 0;
    });
  },
};

export default migrate;
