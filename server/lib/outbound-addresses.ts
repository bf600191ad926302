/**
 * Which addresses the server may connect to on a user's behalf (webhook
 * URLs): every such URL is treated as an SSRF attempt. Refused always:
 * link-local addresses (169.254.0.0/16, fe80::/10), where cloud metadata
 * services answer (169.254.169.254, and fd00:ec2::254 of AWS), and
 * addresses that are no host at all (0.0.0.0/8, multicast, reserved).
 * Refused unless private ones are allowed (WEBHOOK_ALLOW_PRIVATE, which
 * self-hosters and the tests set): loopback, the private ranges of RFC 1918
 * and RFC 4193, and the shared range of RFC 6598 (where Alibaba Cloud's
 * metadata service answers, 100.100.100.200).
 */
import { BlockList, isIP } from 'node:net';
import { lookup } from 'node:dns/promises';

const never = new BlockList();
// RFC 3927: IPv4 link-local, with the cloud metadata services in it.
never.addSubnet('169.254.0.0', 16, 'ipv4');
// RFC 4291 section 2.5.6: IPv6 link-local.
never.addSubnet('fe80::', 10, 'ipv6');
// AWS's IPv6 metadata address, inside the private fc00::/7 but refused even where private ones are allowed.
never.addAddress('fd00:ec2::254', 'ipv6');
// RFC 6890: "this network", multicast, reserved and broadcast; the unspecified and multicast IPv6 ones.
never.addSubnet('0.0.0.0', 8, 'ipv4');
never.addSubnet('224.0.0.0', 4, 'ipv4');
never.addSubnet('240.0.0.0', 4, 'ipv4');
never.addAddress('::', 'ipv6');
never.addSubnet('ff00::', 8, 'ipv6');

const privateRanges = new BlockList();
privateRanges.addSubnet('127.0.0.0', 8, 'ipv4');
privateRanges.addAddress('::1', 'ipv6');
privateRanges.addSubnet('10.0.0.0', 8, 'ipv4');
privateRanges.addSubnet('172.16.0.0', 12, 'ipv4');
privateRanges.addSubnet('192.168.0.0', 16, 'ipv4');
privateRanges.addSubnet('100.64.0.0', 10, 'ipv4');
privateRanges.addSubnet('192.0.0.0', 24, 'ipv4');
privateRanges.addSubnet('198.18.0.0', 15, 'ipv4');
privateRanges.addSubnet('fc00::', 7, 'ipv6');
// IPv6 prefixes that carry an IPv4 address to a translator or relay, which then connects to it: the
// NAT64 well-known prefix (RFC 6052: "64:ff9b::/96") and its local-use one (RFC 8215: "64:ff9b:1::/48"),
// 6to4 (RFC 3056: "2002::/16"), Teredo (RFC 4380: "2001:0000::/32") and the deprecated
// IPv4-compatible ::/96 (RFC 4291 section 2.5.5.1). Whatever IPv4 address they carry, they are
// refused as the private ranges are; one that carries a never-reached address is refused always.
privateRanges.addSubnet('64:ff9b::', 96, 'ipv6');
privateRanges.addSubnet('64:ff9b:1::', 48, 'ipv6');
privateRanges.addSubnet('2002::', 16, 'ipv6');
privateRanges.addSubnet('2001::', 32, 'ipv6');
privateRanges.addSubnet('::', 96, 'ipv6');

/** An address the server will not connect to, and why, in words for the URL's owner. */
export class ForbiddenAddressError extends Error {
  readonly host: string;
  readonly address: string;
  readonly why: string;

  constructor(
    host: string,
    address: string,
    why: string,
  ) {
    super(`${host === address ? address : `${host} resolves to ${address}, which`} is ${why}`);
    this.host = host;
    this.address = address;
    this.why = why;
  }
}

/** The 8 groups of an IPv6 address, as numbers. */
function ipv6Groups(address: string): number[] {
  // A dotted IPv4 tail (::ffff:1.2.3.4, 64:ff9b::1.2.3.4) is two groups.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address);
  let text = address;
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = address.slice(0, dotted.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const parse = (part: string) => (part ? part.split(':').map((group) => Number.parseInt(group, 16)) : []);
  const front = parse(head);
  const back = tail === undefined ? [] : parse(tail);
  return [...front, ...new Array(8 - front.length - back.length).fill(0), ...back];
}

const dottedQuad = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;

/**
 * The IPv4 address an IPv6 one carries, where the connection it names ends at that IPv4 address:
 * IPv4-mapped (::ffff:a.b.c.d), NAT64 (64:ff9b::a.b.c.d) and 6to4 (2002:AABB:CCDD::, RFC 3056:
 * "the 32-bit IPv4 address ... is carried in bits 16 to 47").
 */
function carriedIpv4(address: string): string | undefined {
  if (isIP(address) !== 6) return undefined;
  const groups = ipv6Groups(address.toLowerCase());
  const zeros = (from: number, to: number) => groups.slice(from, to).every((group) => group === 0);
  if (zeros(0, 5) && groups[5] === 0xffff) return dottedQuad(groups[6], groups[7]);
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6)) return dottedQuad(groups[6], groups[7]);
  if (groups[0] === 0x2002) return dottedQuad(groups[1], groups[2]);
  return undefined;
}

/** IPv4-mapped IPv6 (::ffff:127.0.0.1) is checked as the IPv4 address it carries. */
function unmapped(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return { address: mapped[1], family: 'ipv4' };
  return { address, family: isIP(address) === 6 ? 'ipv6' : 'ipv4' };
}

/** Why `address` may not be reached, or undefined when it may. */
export function refusalOf(address: string, allowPrivate: boolean): string | undefined {
  const { address: plain, family } = unmapped(address);
  const carried = carriedIpv4(plain);
  if (never.check(plain, family) || (carried !== undefined && never.check(carried, 'ipv4'))) {
    return 'a link-local, metadata or reserved address; the server never sends to one';
  }
  if (!allowPrivate && privateRanges.check(plain, family)) {
    return "a loopback or private address; this server does not send to those (its operator can allow them)";
  }
  return undefined;
}

/**
 * Resolves `host` and answers the address to connect to: the first one,
 * once every address it resolves to is allowed (a name with one good and one
 * bad address is refused: which one a connection takes is not ours to
 * pick). Connect to the address answered, not to the name again, so that a
 * second lookup cannot answer something else (DNS rebinding).
 */
export async function resolveAllowed(host: string, allowPrivate: boolean, timeoutMs = 5000): Promise<{ address: string; family: 4 | 6 }> {
  const bare = host.replace(/^\[|\]$/g, '');
  const addresses = isIP(bare) ? [{ address: bare, family: isIP(bare) as 4 | 6 }] : await lookupWithin(bare, timeoutMs);
  if (addresses.length === 0) throw new Error(`${host} does not resolve to any address.`);
  for (const { address } of addresses) {
    const why = refusalOf(address, allowPrivate);
    if (why) throw new ForbiddenAddressError(bare, address, why);
  }
  return addresses[0];
}

/** All the addresses of `host`; fails after `timeoutMs`, since a resolver that does not answer must not hold a delivery or a request. */
async function lookupWithin(host: string, timeoutMs: number): Promise<Array<{ address: string; family: 4 | 6 }>> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, fail) => {
    timer = setTimeout(() => fail(new Error(`${host} did not resolve within ${timeoutMs / 1000} seconds.`)), timeoutMs);
  });
  try {
    return (await Promise.race([lookup(host, { all: true, verbatim: true }), timeout])) as Array<{ address: string; family: 4 | 6 }>;
  } finally {
    clearTimeout(timer);
  }
}
