/**
 * The problems of payments, as the API answers them: a server that takes
 * none (409), and a provider that refused or failed (502, "Bad Gateway":
 * the server, "while acting as a gateway or proxy, received an invalid
 * response from an inbound server", RFC 9110 §15.6.3).
 */
import type { Logger } from '../lib/logger.ts';
import { HttpProblem } from '../lib/problems.ts';
import { PaymentProviderError, type PaymentProvider } from './payment-provider.ts';

export function paymentsNotConfigured(): HttpProblem {
  return new HttpProblem('payments-not-configured',
    "This server is not set up to take payments. Its operator must set STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET (see the README's configuration).",
  );
}

/** The provider, or 409 when the server takes no payments. */
export function requirePayments(ctx: { payments?: PaymentProvider }): PaymentProvider {
  if (!ctx.payments) throw paymentsNotConfigured();
  return ctx.payments;
}

/**
 * Runs a provider call; its failure answers 502, saying that nothing was
 * charged, or, when the provider refused what was asked and the caller
 * knows what that means, `refused`'s problem.
 */
export async function viaProvider<T>(ctx: { logger: Logger }, what: string, call: () => Promise<T>, refused?: (error: PaymentProviderError) => HttpProblem): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof PaymentProviderError)) throw error;
    ctx.logger.warn(`payment provider: ${what} failed`, { err: error });
    if (error.refused && refused) throw refused(error);
    throw new HttpProblem('payment-provider-error', `${error.message} Nothing was charged; try again in a minute.`);
  }
}
