import yauzl from 'yauzl';

export interface ZipEntry {
  name: string;
  content: Buffer;
  /** General purpose bit 11: the name is UTF-8. */
  utf8: boolean;
}

/** Every entry of a ZIP held in memory (tests only), with yauzl validating the structure. */
export function unzip(buffer: Buffer): Promise<ZipEntry[]> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(buffer, { lazyEntries: true, decodeStrings: true, validateEntrySizes: true }, (err, zip) => {
      if (err || !zip) return reject(err ?? new Error('no zip'));
      const entries: ZipEntry[] = [];
      zip.on('error', reject);
      zip.on('end', () => resolve(entries));
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (openErr, stream) => {
          if (openErr || !stream) return reject(openErr ?? new Error('no stream'));
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('error', reject);
          stream.on('end', () => {
            entries.push({ name: entry.fileName, content: Buffer.concat(chunks), utf8: (entry.generalPurposeBitFlag & 0x800) !== 0 });
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  });
}
