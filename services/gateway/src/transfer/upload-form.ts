import { Readable } from 'node:stream';
import busboy from 'busboy';
import type { Request, Response } from 'express';
import { AppError, errors } from '@workspace/platform';
import { isUtf8 } from 'node:buffer';
import { decodeFormFilename } from './form-filename.js';
import { watchIdle } from './idle-timer.js';

/**
 * How long the rest of a refused upload's body is read and dropped (a "lingering close"): a
 * client that sends on after an early answer must be able to finish and read it, because a
 * socket closed under its writes is reset and the reset can overtake the answer (EPIPE).
 */
const LINGER_MS = 10_000;

/** The form fields allowed before the file (docs/api/files.md#upload), each also accepted as a query parameter. */
export interface UploadFields {
  path?: string | undefined;
  onConflict?: string | undefined;
  /** An Agent import's project (docs/api/agents.md#import). */
  projectName?: string | undefined;
}

export interface FormFile {
  /** From the part header, decoded as UTF-8 and then as WHATWG form text (`%22` → `"`); '' when none was given. */
  filename: string;
  stream: Readable;
}

/**
 * What to do once the file part starts. `formDone` resolves when the form ends with nothing
 * after the file, and rejects when a part follows it, the form is malformed or the client
 * goes away: the upload must not be committed before it resolves.
 */
export type FileHandler<T> = (fields: UploadFields, file: FormFile, formDone: Promise<void>) => Promise<T>;

export interface UploadFormOptions<T> {
  /** `path` and `onConflict` as query parameters. */
  fromQuery: UploadFields;
  /** A body that sends no byte for this long while we wait for one fails (docs/api/files.md#upload). */
  idleTimeoutMs: number;
  onFile: FileHandler<T>;
  /** The form fields allowed before the file; default `path` and `onConflict`. */
  fieldNames?: ReadonlySet<keyof UploadFields>;
}

const FIELD_NAMES: ReadonlySet<keyof UploadFields> = new Set(['path', 'onConflict']);
/** The longest form field value (a path is at most 900 bytes). */
const FIELD_BYTES = 4096;
/**
 * The largest `file` part without a filename (busboy reads it as a text field, in memory): the
 * bound on what a form's fields may hold, whatever the client sends.
 */
const TEXT_FILE_PART_BYTES = 1024 * 1024;

/**
 * busboy decodes form text (`filename` and `filename*` as UTF-8, with U+FFFD in place of bytes
 * that are not; a value holding U+FFFD is refused, the same rule as for query parameters,
 * strict-utf8.ts; paths and file names by the upload session). Field values it decodes as
 * latin1 (DEF_CHARSET), one character per byte, so that their bytes come back exactly: a `file`
 * part without a filename is the file's bytes whatever they are, and other fields are then read
 * as UTF-8 strictly (fieldBytes, fieldText).
 */
const REPLACEMENT = '\uFFFD';
const DEF_CHARSET = 'latin1';
const NOT_UTF8 = (what: string) => `${what} is not valid UTF-8 (U+FFFD, which stands for bytes that are not, is refused too)`;

/**
 * A field value's bytes as they were sent: latin1 (the default charset) maps each byte to one
 * character. A character past U+00FF means the part named a charset of its own (busboy decoded it
 * with that): its text is taken as it is, in UTF-8.
 */
function fieldBytes(value: string): Buffer {
  // eslint-disable-next-line no-control-regex -- the latin1 range is the point
  return /[^\u0000-\u00ff]/.test(value) ? Buffer.from(value, 'utf8') : Buffer.from(value, 'latin1');
}

/** A field value as text: its bytes read as UTF-8, or undefined when they are not UTF-8. */
function fieldText(value: string): string | undefined {
  const bytes = fieldBytes(value);
  if (!isUtf8(bytes)) return undefined;
  const text = bytes.toString('utf8');
  return text.includes(REPLACEMENT) ? undefined : text;
}

/**
 * Reads a `multipart/form-data` upload as a stream: `path` and `onConflict` first (each at most
 * once, in the form or the query), then exactly one `file` part, then nothing. The file's bytes
 * are handed on as they arrive, with backpressure to the client, never buffered whole.
 */
export function readUploadForm<T>(req: Request, res: Response, { fromQuery, idleTimeoutMs, onFile, fieldNames = FIELD_NAMES }: UploadFormOptions<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const fields: UploadFields = { ...fromQuery };
    let file: FormFile | undefined;
    let state: 'reading' | 'done' | 'failed' = 'reading';
    let formDone!: { resolve: () => void; reject: (err: unknown) => void };
    const done = new Promise<void>((res_, rej) => (formDone = { resolve: res_, reject: rej }));
    done.catch(() => undefined); // observed through onFile's result

    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        defParamCharset: 'utf8',
        defCharset: DEF_CHARSET,
        limits: { fieldSize: TEXT_FILE_PART_BYTES, fields: 4, files: 2, parts: 6 },
      });
    } catch {
      reject(errors.invalidArgument('malformed multipart/form-data request (no boundary?)'));
      return;
    }

    // Set once the body is piped; a failure before that has nothing to stop watching.
    let unwatch: () => void = () => undefined;
    // What the form failed with, answered in place of the bare errors the file stream gives.
    let failure: AppError | undefined;

    /**
     * Ends the exchange early: stop parsing and answer at once. The rest of the body is read
     * into nothing (a lingering close) unless `linger` is false: then the connection is closed
     * after the answer.
     */
    const fail = (err: AppError, linger = true) => {
      if (state !== 'reading') return;
      state = 'failed';
      failure = err;
      unwatch();
      req.unpipe(parser);
      if (!req.complete && !req.destroyed) {
        if (linger) lingerThenClose(req);
        else closeAfterAnswer(req, res);
      }
      if (file) {
        formDone.reject(err);
        file.stream.destroy(err);
      } else reject(err);
    };

    /** The file part begins: the upload starts with the fields read so far. */
    const startFile = (filename: string, stream: Readable) => {
      // Failures reach the upload through its iteration of the stream and `formDone`; an error
      // emitted after that iteration ended must not go unhandled (it would end the process).
      // busboy's own errors (a body cut off before the closing delimiter) are the client's.
      stream.on('error', (err) => {
        if (!(err instanceof AppError)) fail(errors.invalidArgument('malformed or incomplete multipart/form-data body'));
      });
      file = { filename, stream };
      onFile(fields, file, done).then(resolve, (err: unknown) => {
        const answer = err instanceof AppError ? err : (failure ?? errors.internal(err));
        fail(answer);
        reject(answer);
      });
    };

    parser.on('field', (name, value, info) => {
      if (state !== 'reading') return;
      if (file) return fail(errors.invalidArgument(`the "${name}" part must come before the "file" part`, name));
      // A `file` part without a filename nor Content-Type application/octet-stream (curl's
      // `-F file=<notes.txt`) reaches us as a field: it is the file, byte for byte, when `path` names it.
      if (name === 'file') {
        if (info.valueTruncated) return fail(errors.invalidArgument(`a "file" part without a filename is read whole, and holds at most ${TEXT_FILE_PART_BYTES} bytes: give it a filename or Content-Type: application/octet-stream`, 'file'));
        return startFile('', Readable.from([fieldBytes(value)]));
      }
      if (!fieldNames.has(name as keyof UploadFields)) return fail(errors.invalidArgument(`unknown form field "${name}"`, name));
      const key = name as keyof UploadFields;
      if (fields[key] !== undefined) return fail(errors.invalidArgument(`${name} is given more than once`, name));
      if (info.valueTruncated || value.length > FIELD_BYTES) return fail(errors.invalidArgument(`${name} is too long`, name));
      const text = fieldText(value);
      // A path is checked with the file's name by the upload session (one rule for every way in): bytes that are not UTF-8 reach it as U+FFFD.
      if (text === undefined && key !== 'path') return fail(errors.invalidArgument(NOT_UTF8(name), name));
      fields[key] = text ?? fieldBytes(value).toString('utf8');
    });
    parser.on('file', (name, stream, info) => {
      // busboy may still emit parts it parsed before a refusal: nothing starts after one.
      if (state !== 'reading') return void stream.resume();
      if (file || name !== 'file') {
        stream.resume();
        const why = file ? (name === 'file' ? 'only one file may be uploaded per request' : `the "${name}" part must come before the "file" part`) : `unknown form part "${name}"; the file goes in "file"`;
        return fail(errors.invalidArgument(why, name));
      }
      startFile(decodeFormFilename(info.filename ?? ''), stream);
    });
    parser.on('partsLimit', () => fail(errors.invalidArgument('too many form parts')));
    parser.on('fieldsLimit', () => fail(errors.invalidArgument('too many form fields')));
    parser.on('close', () => {
      if (!file) return fail(errors.invalidArgument('the "file" part is missing', 'file'));
      if (state !== 'reading') return;
      state = 'done';
      unwatch();
      formDone.resolve();
    });
    parser.on('error', () => fail(errors.invalidArgument('malformed multipart/form-data body')));
    // A client that goes away mid-upload: the file stream fails, so the upload is cancelled.
    req.once('close', () => {
      if (!req.complete) fail(errors.invalidArgument('the request body ended early'));
    });
    req.pipe(parser);
    // A stalled sender gets no lingering close: nothing more is coming, so answer and hang up.
    unwatch = watchIdle(req, idleTimeoutMs, () => fail(errors.invalidArgument('the upload stalled: no data was received in time'), false));
  });
}

/**
 * A "lingering close": read the rest of a refused body into nothing for up to LINGER_MS, so a
 * client still sending can finish and read the answer; the connection stays usable when the
 * body ends in time and is cut off when it does not.
 */
function lingerThenClose(req: Request): void {
  const cutOff = setTimeout(() => req.destroy(), LINGER_MS).unref();
  req.once('end', () => clearTimeout(cutOff)).once('close', () => clearTimeout(cutOff));
  req.resume();
}

/**
 * `Connection: close` makes Node end the connection once the error answer is written (and only
 * then, so the answer is not lost); the timer cuts off a connection whose answer never goes out.
 */
function closeAfterAnswer(req: Request, res: Response): void {
  if (res.headersSent) {
    req.destroy();
    return;
  }
  res.setHeader('Connection', 'close');
  const cutOff = setTimeout(() => req.destroy(), LINGER_MS).unref();
  res.once('close', () => clearTimeout(cutOff));
}
