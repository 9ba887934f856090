import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { nanos, type NatsConnection } from '@nats-io/transport-node';
import { parseEvent, type WorkspaceEvent } from './schemas.js';
import { STREAM_NAME } from './stream.js';

/**
 * Every event stored on `subject` since `since`, read with a throwaway consumer (it expires on
 * its own). For tools and tests that need to see what was published; services consume with
 * durable consumers instead.
 */
export async function readEvents(nc: NatsConnection, options: { subject: string; since?: Date; stream?: string }): Promise<WorkspaceEvent[]> {
  const stream = options.stream ?? STREAM_NAME;
  const jsm = await jetstreamManager(nc);
  const info = await jsm.consumers.add(stream, {
    filter_subject: options.subject,
    ack_policy: AckPolicy.None,
    inactive_threshold: nanos(30_000),
    ...(options.since ? { deliver_policy: DeliverPolicy.StartTime, opt_start_time: options.since.toISOString() } : { deliver_policy: DeliverPolicy.All }),
  });
  try {
    const consumer = await jetstream(nc).consumers.get(stream, info.name);
    const out: WorkspaceEvent[] = [];
    let pending = info.num_pending;
    while (pending > 0) {
      const batch = await consumer.fetch({ max_messages: Math.min(pending, 256), expires: 2_000 });
      let got = 0;
      for await (const msg of batch) {
        out.push(parseEvent(msg.string()));
        got++;
        pending = msg.info.pending;
      }
      if (got === 0) break;
    }
    return out;
  } finally {
    await jsm.consumers.delete(stream, info.name).catch(() => undefined);
  }
}
