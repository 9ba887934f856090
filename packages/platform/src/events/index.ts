export { createEvent, parseEvent, subjectOf, CloudEventEnvelope, EVENT_DATA, type EventData, type EventType, type WorkspaceEvent } from './schemas.js';
export { ensureStream, EVENT_MAX_AGE_MS, STREAM_NAME, STREAM_SUBJECTS, type StreamOptions } from './stream.js';
export { RedisOutbox, type PendingOutbox } from './outbox.redis.js';
export { OutboxRelay, type EventPublisher, type RelayOptions } from './relay.js';
export { JetStreamPublisher, type JetStreamPublisherOptions } from './publisher.nats.js';
export { readEvents } from './stream-reader.js';
export { durableName, EventConsumer, PARKED_STREAM, type ConsumerOptions, type EventHandler, type EventHandlers } from './consumer.nats.js';
