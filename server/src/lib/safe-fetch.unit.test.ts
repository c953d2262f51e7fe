import { describe, expect, it } from 'vitest';
import { addressAllowed, checkUrl, FetchRefused } from './safe-fetch.ts';

describe('outbound address rules', () => {
  it('refuses loopback, private, link-local, metadata, unique-local, CGNAT, multicast and unspecified addresses', () => {
    for (const a of [
      '127.0.0.1',
      '127.1.2.3',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      'fe80::1',
      'fc00::1',
      'fd00:ec2::254',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
    ])
      expect(addressAllowed(a), a).toBe(false);
  });
  it('allows public unicast addresses, and private ones named by the allow-list (address or CIDR)', () => {
    for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111']) expect(addressAllowed(a), a).toBe(true);
    expect(addressAllowed('127.0.0.1', ['127.0.0.1'])).toBe(true);
    expect(addressAllowed('10.1.2.3', ['10.0.0.0/8'])).toBe(true);
    expect(addressAllowed('10.1.2.3', ['10.0.0.0/16'])).toBe(false);
    expect(addressAllowed('::1', ['127.0.0.1'])).toBe(false);
    expect(addressAllowed('not an ip')).toBe(false);
  });
  it('checks the form of a URL and IP-literal hosts before connecting', () => {
    for (const u of ['ftp://x.test/', 'file:///etc/passwd', 'gopher://x/', 'http://u:p@x.test/', 'nope'])
      expect(() => checkUrl(u), u).toThrow(FetchRefused);
    for (const u of ['http://127.0.0.1/', 'http://[::1]/', 'http://169.254.169.254/latest', 'http://10.0.0.1:8080/'])
      expect(() => checkUrl(u), u).toThrow(/private, loopback/);
    expect(checkUrl('https://example.com/a?b=1').hostname).toBe('example.com');
    expect(checkUrl('http://127.0.0.1:9/', ['127.0.0.1']).port).toBe('9');
  });
});
