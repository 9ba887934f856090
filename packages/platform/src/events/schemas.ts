import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { injectTraceContext } from '../tracing.js';

/**
 * The data of each event type. Every payload names the owning user (docs/events.md#envelope), so a
 * consumer can act for that user without asking anyone else.
 */
const agentConfigChanged = z.object({
  userId: z.string().min(1),
  agentId: z.string(),
  configId: z.string(),
  projectName: z.string(),
});

const entryKind = z.enum(['file', 'directory']);
const fileChanged = z.object({
  userId: z.string().min(1),
  path: z.string(),
  kind: entryKind.optional(),
  size: z.number().int().nonnegative().optional(),
  sha256: z.string().optional(),
});

export const EVENT_DATA = {
  'agent.created': agentConfigChanged,
  'agent.updated': agentConfigChanged,
  'agent.deleted': z.object({ userId: z.string().min(1), agentId: z.string() }),
  'project.created': z.object({ userId: z.string().min(1), name: z.string(), archived: z.boolean() }),
  'project.updated': z.object({ userId: z.string().min(1), name: z.string(), archived: z.boolean() }),
  /** A creation undone because its folder could not be written. */
  'project.deleted': z.object({ userId: z.string().min(1), name: z.string() }),
  'chat.created': z.object({
    userId: z.string().min(1),
    chatId: z.string(),
    agentId: z.string(),
    configId: z.string(),
    projectName: z.string(),
    title: z.string(),
    createdAt: z.string(),
    updatedAt: z.string(),
  }),
  /**
   * A file stored at a path where there was none (upload, copy, project context file), or a
   * directory copied (`kind: "directory"`, no size).
   */
  'file.created': fileChanged,
  /** A file replaced (an overwrite, a move or copy onto it). */
  'file.updated': fileChanged,
  /** A file removed, or a directory with everything below it (one event, `kind: "directory"`). */
  'file.deleted': z.object({ userId: z.string().min(1), path: z.string(), kind: entryKind.optional() }),
  /** A file or a directory moved (renamed) from `from` to `path`. */
  'file.moved': z.object({ userId: z.string().min(1), from: z.string(), path: z.string(), kind: entryKind }),
  /**
   * The tree at `path` made what it was at `to` (a checkpoint id or a time), in one step; the
   * counts as the rewind answered, and `checkpointId` the checkpoint taken just before (its undo).
   */
  'file.rewound': z.object({
    userId: z.string().min(1),
    path: z.string(),
    to: z.string(),
    checkpointId: z.string(),
    restored: z.number().int(),
    removed: z.number().int(),
    unchanged: z.number().int(),
  }),
} as const;

export type EventType = keyof typeof EVENT_DATA;
export type EventData<T extends EventType> = z.output<(typeof EVENT_DATA)[T]>;

/** A CloudEvents 1.0 event in its JSON format (structured mode). */
export interface WorkspaceEvent<T extends EventType = EventType> {
  specversion: '1.0';
  id: string;
  type: T;
  source: string;
  time: string;
  subject: string;
  data: EventData<T>;
  /** W3C trace context of the change that caused the event (CloudEvents distributed tracing). */
  traceparent?: string;
}

export const CloudEventEnvelope = z.object({
  specversion: z.literal('1.0'),
  id: z.string().min(1),
  type: z.string().min(1),
  source: z.string().min(1),
  time: z.iso.datetime(),
  subject: z.string().min(1),
  data: z.unknown(),
  traceparent: z.string().optional(),
});

/** The NATS subject of a type: `agent.deleted` → `agents.deleted` (streams match `agents.>`). */
const SUBJECT_PREFIX: Record<string, string> = { agent: 'agents', chat: 'chats', project: 'projects', file: 'files' };

export function subjectOf(type: EventType): string {
  const [entity = '', ...rest] = type.split('.');
  const prefix = SUBJECT_PREFIX[entity];
  if (!prefix) throw new Error(`no subject for event type ${type}`);
  return [prefix, ...rest].join('.');
}

/** Builds a validated event; `id` is a fresh UUID, used as the JetStream msgID for dedup. */
export function createEvent<T extends EventType>(
  type: T,
  options: { source: string; subject: string; data: EventData<T>; id?: string; time?: string },
): WorkspaceEvent<T> {
  const data = EVENT_DATA[type].parse(options.data) as EventData<T>;
  const trace: Record<string, string> = {};
  injectTraceContext(trace);
  return {
    ...(trace.traceparent ? { traceparent: trace.traceparent } : {}),
    specversion: '1.0',
    id: options.id ?? randomUUID(),
    type,
    source: options.source,
    time: options.time ?? new Date().toISOString(),
    subject: options.subject,
    data,
  };
}

function isEventType(type: string): type is EventType {
  return Object.hasOwn(EVENT_DATA, type);
}

/** Parses and validates an event received from the stream; throws on anything unknown. */
export function parseEvent(raw: unknown): WorkspaceEvent {
  const envelope = CloudEventEnvelope.parse(typeof raw === 'string' ? JSON.parse(raw) : raw);
  if (!isEventType(envelope.type)) throw new Error(`unknown event type ${envelope.type}`);
  const data = EVENT_DATA[envelope.type].parse(envelope.data);
  return { ...envelope, type: envelope.type, data } as WorkspaceEvent;
}
