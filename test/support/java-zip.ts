import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const PROGRAM = fileURLToPath(new URL('./java/ReadZip.java', import.meta.url));

export interface JavaEntry {
  name: string;
  size: number;
  sha256: string;
}

/**
 * The entries of `zip` as java.util.zip.ZipInputStream streams them (OpenJDK's single-file
 * launcher: `java ReadZip.java`). Rejects with Java's message when it refuses the archive.
 */
export async function readWithJava(zip: Buffer): Promise<JavaEntry[]> {
  const dir = await mkdtemp(join(tmpdir(), 'java-zip-'));
  try {
    const file = join(dir, 'archive.zip');
    await writeFile(file, zip);
    const { stdout } = await promisify(execFile)('java', [PROGRAM, file], { timeout: 60_000 });
    return stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [sha256, size, ...name] = line.split(' ');
        return { sha256: sha256!, size: Number(size), name: name.join(' ') };
      });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
