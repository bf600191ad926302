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

/** IPv4-mapped IPv6 (::ffff:127.0.0.1) is checked as the IPv4 address it carries. */
function unmapped(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return { address: mapped[1], family: 'ipv4' };
  return { address, family: isIP(address) === 6 ? 'ipv6' : 'ipv4' };
}

/** Why `address` may not be reached, or undefined when it may. */
export function refusalOf(address: string, allowPrivate: boolean): string | undefined {
  const { address: plain, family } = unmapped(address);
  if (never.check(plain, family)) {
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
