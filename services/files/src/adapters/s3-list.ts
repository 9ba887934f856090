import { XMLParser } from 'fast-xml-parser';
import type { Client } from 'minio';
import type { ListPage } from '../domain/ports.js';

/** RFC 3986 encoding, as SigV4 canonical query strings require. */
function rfc3986(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

const parser = new XMLParser({
  // Keys are text: "007" must not become 7, and " a " must keep its spaces.
  parseTagValue: false,
  trimValues: false,
  ignoreAttributes: true,
  // Numeric character references (&#x1F680;) are decoded only with this on.
  htmlEntities: true,
  isArray: (name) => name === 'Contents' || name === 'CommonPrefixes',
});

type Xml = Record<string, unknown>;

function text(value: unknown): string {
  return typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value);
}

/**
 * One ListObjectsV2 page. Written here rather than taken from minio because minio decodes
 * every key as URL-encoded even when the server ignored `encoding-type=url` (s3rver does),
 * which corrupts keys holding `%` or `+`. Keys are decoded only when the response says
 * `<EncodingType>url</EncodingType>`, as the S3 API specifies.
 */
export async function listPage(
  client: Client,
  bucket: string,
  options: { prefix: string; delimiter: string; maxKeys: number; continuationToken?: string | undefined },
): Promise<ListPage & { nextToken: string | undefined }> {
  const params: [string, string][] = [
    ['continuation-token', options.continuationToken ?? ''],
    ['delimiter', options.delimiter],
    ['encoding-type', 'url'],
    ['list-type', '2'],
    ['max-keys', String(options.maxKeys)],
    ['prefix', options.prefix],
  ];
  const query = params
    .filter(([k, v]) => v !== '' || k === 'prefix')
    .map(([k, v]) => `${k}=${rfc3986(v)}`)
    .join('&');
  const res = await client.makeRequestAsync({ method: 'GET', bucketName: bucket, query }, '', [200]);
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  const root = (parser.parse(Buffer.concat(chunks).toString('utf8')) as Xml).ListBucketResult as Xml | undefined;
  if (!root) throw new Error('S3 listing without ListBucketResult');
  const encoded = text(root.EncodingType).toLowerCase() === 'url';
  const key = (raw: unknown) => (encoded ? decodeURIComponent(text(raw).replace(/\+/g, ' ')) : text(raw));
  const objects = ((root.Contents as Xml[] | undefined) ?? []).map((c) => ({
    key: key(c.Key),
    size: Number(text(c.Size)),
    lastModified: new Date(text(c.LastModified)),
    etag: text(c.ETag).replace(/^"|"$/g, ''),
  }));
  const prefixes = ((root.CommonPrefixes as Xml[] | undefined) ?? []).map((p) => key(p.Prefix));
  const truncated = text(root.IsTruncated) === 'true';
  return { objects, prefixes, nextToken: truncated ? text(root.NextContinuationToken) || undefined : undefined };
}
