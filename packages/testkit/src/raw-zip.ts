import { crc32, deflateRawSync } from 'node:zlib';

/** One entry of a hand-made ZIP: any name, and sizes that may lie (for hostile archives). */
export interface RawEntry {
  name: string;
  data: Buffer;
  deflate?: boolean;
  /** The uncompressed size to declare (default: the true one). */
  declaredSize?: number;
}

/** What a ZIP entry's local header and its central directory record both say of it. */
export interface ZipEntryFields {
  /** The name as UTF-8 bytes (flagged so). */
  name: Buffer;
  /** 0 STORED, 8 DEFLATE. */
  method: number;
  crc: number;
  compressedSize: number;
  size: number;
  /** MS-DOS time and date (0 for none). */
  dosTime?: number;
  dosDate?: number;
}

/** An entry's local file header, its name included. */
export function zipLocalHeader(e: ZipEntryFields): Buffer {
  const header = Buffer.alloc(30 + e.name.byteLength);
  header.writeUInt32LE(0x04034b50, 0);
  header.writeUInt16LE(20, 4);
  header.writeUInt16LE(0x800, 6); // UTF-8 names
  header.writeUInt16LE(e.method, 8);
  header.writeUInt16LE(e.dosTime ?? 0, 10);
  header.writeUInt16LE(e.dosDate ?? 0, 12);
  header.writeUInt32LE(e.crc, 14);
  header.writeUInt32LE(e.compressedSize, 18);
  header.writeUInt32LE(e.size, 22);
  header.writeUInt16LE(e.name.byteLength, 26);
  e.name.copy(header, 30);
  return header;
}

/** An entry's central directory record, its name included; `offset` is where its local header starts. */
export function zipCentralRecord(e: ZipEntryFields, offset: number): Buffer {
  const record = Buffer.alloc(46 + e.name.byteLength);
  record.writeUInt32LE(0x02014b50, 0);
  record.writeUInt16LE(20, 4);
  record.writeUInt16LE(20, 6);
  record.writeUInt16LE(0x800, 8);
  record.writeUInt16LE(e.method, 10);
  record.writeUInt16LE(e.dosTime ?? 0, 12);
  record.writeUInt16LE(e.dosDate ?? 0, 14);
  record.writeUInt32LE(e.crc, 16);
  record.writeUInt32LE(e.compressedSize, 20);
  record.writeUInt32LE(e.size, 24);
  record.writeUInt16LE(e.name.byteLength, 28);
  record.writeUInt32LE(offset, 42);
  e.name.copy(record, 46);
  return record;
}

/** The end of central directory record: `count` entries, a directory of `directoryBytes` starting at `offset`. */
export function zipEnd(count: number, directoryBytes: number, offset: number): Buffer {
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Math.min(count, 0xffff), 8);
  end.writeUInt16LE(Math.min(count, 0xffff), 10);
  end.writeUInt32LE(directoryBytes, 12);
  end.writeUInt32LE(offset, 16);
  return end;
}

/**
 * A ZIP written byte by byte (tests and benchmarks only), so that names and sizes are exactly what a test
 * says, which no archiver allows: `../` names, lying sizes, 10,000 entries.
 */
export function rawZip(entries: RawEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const body = e.deflate ? deflateRawSync(e.data) : e.data;
    const fields = { name: Buffer.from(e.name, 'utf8'), method: e.deflate ? 8 : 0, crc: crc32(e.data), compressedSize: body.byteLength, size: e.declaredSize ?? e.data.byteLength };
    const local = zipLocalHeader(fields);
    locals.push(local, body);
    centrals.push(zipCentralRecord(fields, offset));
    offset += local.byteLength + body.byteLength;
  }
  const directory = Buffer.concat(centrals);
  return Buffer.concat([...locals, directory, zipEnd(entries.length, directory.byteLength, offset)]);
}
