import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from './atomic-io.js';

/**
 * Submitted files by content (sha256), so a workspace can be rebuilt wherever a stage is claimed:
 * `.autoteam/blobs/<sha256>` on the file board, a table on the PostgreSQL board (whose teammates may
 * each have their own folder, on their own machine).
 */
export interface BlobStore {
  put(hash: string, data: Buffer): Promise<void>;
  get(hash: string): Promise<Buffer | null>;
}

export class FileBlobStore implements BlobStore {
  readonly dir: string;

  constructor(rootDir: string) {
    this.dir = path.join(path.resolve(rootDir), '.autoteam', 'blobs');
  }

  async put(hash: string, data: Buffer): Promise<void> {
    const file = path.join(this.dir, hash);
    if (fs.existsSync(file)) return;
    fs.mkdirSync(this.dir, { recursive: true });
    writeFileAtomic(file, data);
  }

  async get(hash: string): Promise<Buffer | null> {
    if (!/^[0-9a-f]{64}$/.test(hash)) return null;
    const file = path.join(this.dir, hash);
    return fs.existsSync(file) ? fs.readFileSync(file) : null;
  }
}
