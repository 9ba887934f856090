import { once } from 'node:events';
import { Readable } from 'node:stream';
import archiver from 'archiver';
import { errors, type Logger } from '@workspace/platform';
import { isWorkspaceRelative } from './entries.js';
import { TenantLayout } from './layout.js';
import { parsePath, segmentProblem } from './paths.js';
import type { ObjectStore } from './ports.js';

/**
 * archiver strips a leading `word:` from entry names (a guard against Windows drive letters),
 * and does so three times: in its core, in zip-stream, and in compress-commons' entry. A
 * project may well be called `todo:list`, so such a name gets one throwaway `_:` per pass.
 * export.test.ts pins this against the installed archiver.
 */
const STRIPPED_PREFIX = /^\w+:/;
const PASSES = 3;
export function archiverSafeName(name: string): string {
  return STRIPPED_PREFIX.test(name) ? `${'_:'.repeat(PASSES)}${name}` : name;
}

/**
 * A ZIP of every file under `folder`, entries named `<rootName>/<path below folder>`, built
 * while it is read: objects are listed page by page and opened one at a time, only when the
 * archive is ready for them, so nothing is assembled in memory or on disk and the first bytes
 * leave before the last object is read. Backpressure from the reader pauses everything.
 */
export function exportFolder(options: {
  store: ObjectStore;
  userId: string;
  folder: string;
  rootName: string;
  logger: Logger;
  signal?: AbortSignal | undefined;
}): Readable {
  const folder = parsePath(options.folder);
  const problem = segmentProblem(options.rootName);
  if (problem) throw errors.invalidArgument(`invalid archive root name: ${problem}`, 'rootName');
  const prefix = new TenantLayout(options.userId).dirPrefix(folder);
  // Level 1: exports are mostly streamed to a browser; speed matters more than a few percent.
  const archive = archiver('zip', { zlib: { level: 1 } });
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  options.signal?.addEventListener('abort', onAbort, { once: true });

  void (async () => {
    try {
      for await (const page of options.store.list(prefix, { recursive: true })) {
        for (const object of page.objects) {
          const rel = object.key.slice(prefix.length);
          if (!isWorkspaceRelative(rel)) continue;
          const body = Readable.from(await options.store.read(object.key, { signal: stop.signal }));
          const appended = once(archive, 'entry', { signal: stop.signal });
          archive.append(body, { name: archiverSafeName(`${options.rootName}/${rel}`), date: object.lastModified });
          await appended;
        }
      }
      await archive.finalize();
    } catch (err) {
      if (!stop.signal.aborted) options.logger.error({ err }, 'export failed; the archive is cut short');
      archive.abort();
      archive.destroy(stop.signal.aborted ? undefined : errors.unavailable('file storage', err));
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
    }
  })();

  archive.once('close', () => stop.abort());
  return archive;
}
