import { describe, expect, it } from 'vitest';
import { Coalesce } from './coalesce.js';

async function through(coalesce: Coalesce, chunks: Buffer[]): Promise<Buffer[]> {
  const out: Buffer[] = [];
  coalesce.on('data', (c: Buffer) => out.push(c));
  const ended = new Promise((resolve) => coalesce.once('end', resolve));
  for (const chunk of chunks) coalesce.write(chunk);
  coalesce.end();
  await ended;
  return out;
}

describe('export — coalesced writes', () => {
  it('export — small chunks gather into one write; a large chunk goes on as it is, after them, not copied', async () => {
    const big = Buffer.alloc(64, 7);
    const small = [Buffer.from('ab'), Buffer.from('cde'), Buffer.from('f')];
    const out = await through(new Coalesce(32), [...small, big, Buffer.from('gh')]);
    expect(out.map((c) => c.toString('latin1'))).toEqual(['abcdef', big.toString('latin1'), 'gh']);
    expect(out[1]).toBe(big);
  });

  it('export — gathered chunks go on once enough has, else on the next turn of the event loop', async () => {
    const coalesce = new Coalesce(8);
    const out: string[] = [];
    coalesce.on('data', (c: Buffer) => out.push(c.toString()));
    coalesce.write(Buffer.from('abc'));
    coalesce.write(Buffer.from('defgh'));
    expect(out).toEqual(['abcdefgh']);
    coalesce.write(Buffer.from('ij'));
    expect(out).toEqual(['abcdefgh']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(out).toEqual(['abcdefgh', 'ij']);
  });
});
