import { Webhook } from 'standardwebhooks';
import { Agent, request } from 'undici';
import type { AddressPolicy } from '../domain/address-policy.js';
import type { Resolver, Sender, SendResult } from '../domain/ports.js';
import { AddressRefused, guardedLookup } from './guarded-lookup.js';

export interface HttpSenderOptions {
  policy: AddressPolicy;
  resolver: Resolver;
  /** One attempt's limit, connect to the end of the answer (docs/api/webhooks.md#delivery: 10 s). */
  timeoutMs: number;
  userAgent?: string;
}

/** Bytes of a receiver's answer read (and dropped) before the connection is let go. */
const ANSWER_LIMIT = 64 * 1024;

/**
 * POSTs an event to a receiver as Standard Webhooks says: `webhook-id` (the event id, the same at
 * every attempt), `webhook-timestamp` (this attempt) and `webhook-signature`, made by the
 * `standardwebhooks` library. undici's `request` follows no redirect, so a 3xx is just a failed
 * attempt; every connect goes through the SSRF guard's lookup (an IP literal is checked here,
 * since a connect to one looks nothing up).
 */
export class HttpSender implements Sender {
  readonly #o: HttpSenderOptions;
  readonly #agent: Agent;

  constructor(options: HttpSenderOptions) {
    this.#o = options;
    this.#agent = new Agent({ connect: { lookup: guardedLookup(options.policy, options.resolver), timeout: options.timeoutMs }, keepAliveTimeout: 30_000 });
  }

  async send(options: { url: string; secret: string; messageId: string; body: string; signal: AbortSignal }): Promise<SendResult> {
    const target = this.#o.policy.target(options.url);
    if (typeof target === 'string') return { ok: false, status: null, error: short(target) };
    if (target.literal) {
      const problem = this.#o.policy.checkAddresses(target, [target.host]);
      if (problem) return { ok: false, status: null, error: short(problem) };
    }
    const now = new Date();
    const headers = {
      'content-type': 'application/json',
      'user-agent': this.#o.userAgent ?? 'workspace-webhooks/1',
      'webhook-id': options.messageId,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': new Webhook(options.secret).sign(options.messageId, now, options.body),
    };
    const signal = AbortSignal.any([options.signal, AbortSignal.timeout(this.#o.timeoutMs)]);
    try {
      const res = await request(target.url, { method: 'POST', headers, body: options.body, dispatcher: this.#agent, signal });
      await res.body.dump({ limit: ANSWER_LIMIT, signal }).catch(() => undefined);
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      return { ok, status: res.statusCode, error: ok ? null : `HTTP ${res.statusCode}` };
    } catch (err) {
      return { ok: false, status: null, error: short(describe(err, signal)) };
    }
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }
}

/** A failed request in a few words: the timeout, the SSRF guard's reason, or the error code. */
function describe(err: unknown, signal: AbortSignal): string {
  if (signal.aborted) return 'timed out';
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (e instanceof AddressRefused) return e.message;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return 'request failed';
}

/** Errors in the log are short and ours (docs/api/webhooks.md#deliveries). */
function short(message: string | undefined): string {
  return [...(message ?? 'request failed')].slice(0, 200).join('');
}
