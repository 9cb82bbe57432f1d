// SQLite only, because it is about SQLite's file: a database on a network filesystem (NFS,
// SMB) is refused when the store opens, since SQLite's locks and WAL are not safe there.
// PostgreSQL has no file of ours to place. The filesystem type is stubbed: the test
// machine has no NFS mount; the real statfs is exercised by the case on the local disk.

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { UnsafeFilesystemError } from '../../src/core/errors.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';

const dirs: string[] = [];
function tempPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-fs-'));
  dirs.push(dir);
  return join(dir, 'data', 'mailroom.db');
}

describe('a SQLite database on a network filesystem', () => {
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ['NFS', 0x6969],
    ['SMB2', 0xfe534d42],
    ['CIFS read as a signed number', 0xff534d42 | 0],
  ])('is refused on %s with a message that says why and what to do, and no database file is made', (name, type) => {
    const path = tempPath();
    let error: unknown;
    try {
      new SqliteStore({ path, filesystemType: () => type });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(UnsafeFilesystemError);
    expect((error as UnsafeFilesystemError).code).toBe('MR_ERR_UNSAFE_FILESYSTEM');
    expect((error as Error).message).toMatch(/network filesystem/);
    expect((error as Error).message).toMatch(/local disk|PostgreSQL/);
    expect((error as UnsafeFilesystemError).filesystem).toBe(name.split(' ')[0]);
    expect(existsSync(path)).toBe(false);
  });

  it('opens on the local disk, with the real filesystem check', async () => {
    const store = new SqliteStore({ path: tempPath() });
    await store.migrate();
    expect((await store.schemaVersion()).database).toBeGreaterThan(0);
    await store.close();
  });

  it('opens when the filesystem type cannot be read (no statfs): SQLite decides', async () => {
    const store = new SqliteStore({
      path: tempPath(),
      filesystemType: () => {
        throw new Error('ENOSYS');
      },
    });
    await store.migrate();
    await store.close();
  });
});
