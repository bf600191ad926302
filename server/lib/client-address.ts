/**
 * The key a client's address is counted by, in every limit of the server: the per-address rate limit
 * (http/rate-limit.ts) and the attempt limits (auth/attempt-limits.ts). Kept below both.
 */
import { isIPv6 } from 'node:net';

/**
 * The counter key of an address. An IPv6 client usually holds a whole /64
 * (RFC 6177 recommends a /56 or /48 per site, a /64 per subnet), so it could
 * take a fresh address per request; its /64 is counted as one. IPv4-mapped
 * IPv6 addresses count as their IPv4 address.
 */
export function addressKey(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1];
  if (!isIPv6(ip)) return ip;
  return `${expandIPv6(ip).slice(0, 4).join(':')}::/64`;
}

/** The eight groups of an IPv6 address, without its zone, "::" expanded. */
function expandIPv6(ip: string): string[] {
  const [head, tail = ''] = ip.split('%')[0].split('::');
  const left = head ? head.split(':') : [];
  const right = ip.includes('::') && tail ? tail.split(':') : [];
  // An embedded IPv4 tail (::1.2.3.4) is two groups; only the first four groups are used, so it need not be converted.
  const missing = 8 - left.length - right.length;
  const groups = ip.includes('::') ? [...left, ...Array(Math.max(0, missing)).fill('0'), ...right] : left;
  return groups.map((group) => group.toLowerCase().replace(/^0+(?=.)/, ''));
}
