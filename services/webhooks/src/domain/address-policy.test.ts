import { describe, expect, it } from 'vitest';
import { AddressPolicy, isPublicAddress, type TargetUrl } from './address-policy.js';
import { UrlGuard } from './url-guard.js';

describe('address policy', () => {
  it.each([
    ['10.1.2.3'],
    ['172.16.0.1'],
    ['172.31.255.255'],
    ['192.168.1.1'],
    ['127.0.0.1'],
    ['127.0.0.2'],
    ['0.0.0.0'],
    ['169.254.169.254'],
    ['169.254.1.1'],
    ['100.64.0.1'],
    ['100.127.255.254'],
    ['224.0.0.1'],
    ['255.255.255.255'],
    ['198.18.0.1'],
    ['::1'],
    ['::'],
    ['fe80::1'],
    ['fc00::1'],
    ['fd12:3456::1'],
    ['::ffff:127.0.0.1'],
    ['::ffff:10.0.0.1'],
    ['::ffff:169.254.169.254'],
    ['64:ff9b::7f00:1'],
    ['2002:7f00:1::'],
    ['2001:db8::1'],
    ['not-an-address'],
  ])('address policy — %s is not public', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each([['8.8.8.8'], ['1.1.1.1'], ['172.32.0.1'], ['100.128.0.1'], ['2001:4860:4860::8888'], ['::ffff:8.8.8.8']])('address policy — %s is public', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  // IPv6 forms that carry an IPv4 address are judged by the IPv4 address they carry. Written as
  // URLs and resolvers write them: the IPv4 address as two hex groups (`::7f00:1`, not `::127.0.0.1`).
  const groups = (v4: string, invert = false) => {
    const [a, b, c, d] = v4.split('.').map((n) => (invert ? 255 - Number(n) : Number(n))) as [number, number, number, number];
    return `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  };
  // A Teredo address holds its server's IPv4 address, and its client's inverted.
  const teredo = (server: string, client: string) => `2001:0:${groups(server)}:8000:63bf:${groups(client, true)}`;
  const FORMS: [string, (v4: string) => string][] = [
    ['IPv4-mapped ::ffff:0:0/96', (v4) => `::ffff:${groups(v4)}`],
    ['IPv4-mapped, dotted', (v4) => `::ffff:${v4}`],
    ['IPv4-compatible ::/96', (v4) => `::${groups(v4)}`],
    ['IPv4-compatible, dotted', (v4) => `::${v4}`],
    ['IPv4-translated ::ffff:0:0:0/96', (v4) => `::ffff:0:${groups(v4)}`],
    ['NAT64 64:ff9b::/96', (v4) => `64:ff9b::${groups(v4)}`],
    ['6to4 2002::/16', (v4) => `2002:${groups(v4)}::1`],
    ['Teredo 2001::/32 (client)', (v4) => teredo('65.54.227.120', v4)],
    ['Teredo 2001::/32 (server)', (v4) => teredo(v4, '8.8.8.8')],
  ];
  const EMBEDDED: [string, boolean][] = [
    ['127.0.0.1', false], ['127.1.2.3', false], ['10.0.0.1', false], ['172.16.0.1', false], ['192.168.1.1', false],
    ['169.254.169.254', false], ['100.64.0.1', false], ['0.0.0.0', false], ['8.8.8.8', true], ['93.184.215.14', true],
  ];
  it.each(FORMS.flatMap(([form, embed]) => EMBEDDED.map(([v4, isPublic]) => [form, v4, embed(v4), isPublic] as const)))(
    'address policy — %s holding %s (%s): public only when the IPv4 address is',
    (_form, _v4, address, isPublic) => {
      expect(isPublicAddress(address)).toBe(isPublic);
    },
  );

  it('address policy — the local-use NAT64 prefix 64:ff9b:1::/48 places its IPv4 address where only its operator knows: never public', () => {
    expect(isPublicAddress('64:ff9b:1::808:808')).toBe(false);
  });

  const policy = new AddressPolicy(['127.0.0.1', 'LocalHost', '[::1]']);
  const target = (raw: string) => policy.target(raw) as TargetUrl;

  it('address policy — https anywhere; http only to a listed host; other schemes and relative URLs refused', () => {
    expect(target('https://example.com/hook')).toMatchObject({ host: 'example.com', listed: false, literal: false });
    expect(target('http://localhost:8080/x')).toMatchObject({ host: 'localhost', listed: true });
    expect(target('http://[::1]:9/')).toMatchObject({ host: '::1', listed: true, literal: true });
    expect(policy.target('http://example.com/hook')).toMatch(/https/);
    expect(policy.target('ftp://example.com/')).toMatch(/https/);
    expect(policy.target('/relative')).toMatch(/absolute/);
    expect(policy.target('file:///etc/passwd')).toMatch(/https/);
    expect(policy.target(`https://example.com/${'a'.repeat(2048)}`)).toMatch(/2048/);
  });

  it('address policy — a listed host may resolve anywhere; others must resolve only to public addresses', () => {
    expect(policy.checkAddresses(target('http://localhost/'), ['127.0.0.1'])).toBeUndefined();
    expect(policy.checkAddresses(target('https://example.com/'), ['93.184.216.34'])).toBeUndefined();
    expect(policy.checkAddresses(target('https://example.com/'), ['93.184.216.34', '10.0.0.1'])).toMatch(/private/);
    expect(policy.checkAddresses(target('https://example.com/'), [])).toMatch(/resolve/);
    // 'localhost.' is another name than the listed 'localhost'.
    expect(policy.checkAddresses(target('https://localhost./'), ['127.0.0.1'])).toMatch(/private/);
  });

  it('address policy — the URL guard resolves names, judges literals as they are, and refuses names that do not resolve', async () => {
    const names: Record<string, string[]> = { 'public.test': ['93.184.216.34'], 'rebind.test': ['93.184.216.34', '127.0.0.1'], 'meta.test': ['169.254.169.254'] };
    const guard = new UrlGuard({
      policy: new AddressPolicy([]),
      resolver: {
        resolve: async (host) => {
          const found = names[host];
          if (!found) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
          return found;
        },
      },
    });
    expect(await guard.problem('https://public.test/hook')).toBeUndefined();
    expect(await guard.problem('https://rebind.test/hook')).toMatch(/private/);
    expect(await guard.problem('https://meta.test/hook')).toMatch(/private/);
    expect(await guard.problem('https://nowhere.test/hook')).toMatch(/resolve/);
    expect(await guard.problem('https://169.254.169.254/latest/meta-data')).toMatch(/private/);
    expect(await guard.problem('https://[::ffff:7f00:1]/')).toMatch(/private/);
    expect(await guard.problem('https://[::127.0.0.1]/')).toMatch(/private/);
    expect(await guard.problem('https://[::10.0.0.1]/')).toMatch(/private/);
    expect(await guard.problem('https://[64:ff9b::169.254.169.254]/')).toMatch(/private/);
    expect(await guard.problem('https://[2002:7f00:1::1]/')).toMatch(/private/);
    expect(await guard.problem('https://8.8.8.8/')).toBeUndefined();
    expect(await guard.problem('http://127.0.0.1:9/')).toMatch(/https/);
    const slow = new UrlGuard({ policy: new AddressPolicy([]), resolver: { resolve: () => new Promise(() => undefined) }, resolveMs: 50 });
    expect(await slow.problem('https://slow.test/')).toMatch(/resolve/);
  });
});
