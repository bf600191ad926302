/** A read run: autocannon against one URL for BENCH_SECONDS, every answer a 2xx. */
import autocannon from 'autocannon';
import { seconds } from './settings.ts';

/** `connections` at once for `seconds`; throws on any non-2xx answer or error, so a figure is never of refusals. */
export async function load(url: string, headers: Record<string, string> = {}, connections = 50) {
  const result = await autocannon({ url, connections, duration: seconds, headers });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx responses, ${result.errors} errors`);
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 };
}
