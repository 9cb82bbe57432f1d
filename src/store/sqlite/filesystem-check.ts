// SQLite needs a local filesystem. Its locks are unreliable on NFS and SMB (two writers can
// both believe they hold the write lock), and WAL mode keeps its index in shared memory,
// which a network filesystem cannot share between hosts: SQLite's own "How To Corrupt An
// SQLite Database File" lists both. A database there could lose acknowledged jobs or run
// one twice at once, so it is refused when the store opens, before a byte is written.

import { statfsSync } from 'node:fs';
import { UnsafeFilesystemError } from '../../core/errors.js';

/** statfs f_type magic numbers (linux/magic.h and the filesystems' own headers). */
const NETWORK_FILESYSTEMS: ReadonlyMap<number, string> = new Map([
  [0x6969, 'NFS'],
  [0x517b, 'SMB'],
  [0xff534d42, 'CIFS'],
  [0xfe534d42, 'SMB2'],
  [0x01021997, '9p (a VM or WSL host share)'],
  [0x5346414f, 'AFS'],
  [0x00c36400, 'CephFS'],
]);

/** Reads a directory's filesystem type; tests stub it. */
export type FilesystemType = (directory: string) => number;

const fromStatfs: FilesystemType = (directory) => statfsSync(directory).type;

/**
 * @throws UnsafeFilesystemError when `directory` is on a network filesystem. A type that
 *   cannot be read (no statfs on this platform) is let through: SQLite will try.
 */
export function assertLocalFilesystem(directory: string, filesystemType: FilesystemType = fromStatfs): void {
  let type: number;
  try {
    type = filesystemType(directory);
  } catch {
    return;
  }
  // f_type is unsigned; a 32-bit magic can come back negative from a signed read.
  const name = NETWORK_FILESYSTEMS.get(type >>> 0);
  if (name !== undefined) throw new UnsafeFilesystemError(directory, name);
}
