// Placeholder until the PostgreSQL store lands (issue 3).
import { UnsupportedError } from '../../core/errors.js';
import type { Store } from '../store.js';

export class PostgresStore {
  static async open(_options: { url: string; schema?: string; poolSize?: number }): Promise<Store> {
    throw new UnsupportedError('The PostgreSQL store is not built yet.');
  }
}
