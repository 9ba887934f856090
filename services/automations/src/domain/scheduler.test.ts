import { describe, expect, it } from 'vitest';
import type { DueRun } from './ports.js';
import { CREATE_GRACE_MS, planRun, runIdempotencyKey } from './scheduler.js';

const now = new Date('2026-05-01T12:00:00.400Z');
const run = (extra: Partial<DueRun> = {}): DueRun => ({
  scheduleId: 'sch_0123456789abcdef0123456789abcdef',
  userId: 'u',
  agentId: 'agt_0123456789abcdef0123456789abcdef',
  cron: '*/5 * * * *',
  timezone: 'UTC',
  createdAt: '2026-05-01T10:00:00.000Z',
  dueAt: Date.parse('2026-05-01T12:00:00.000Z'),
  firstClaimAt: now.getTime(),
  claimedAt: now.getTime(),
  leaseUntil: now.getTime() + 5_000,
  ...extra,
});

describe('claim plan', () => {
  it('claim — a due run starts and moves to the next cron time after now', () => {
    expect(planRun(run(), now, true)).toEqual({ kind: 'start', next: Date.parse('2026-05-01T12:05:00.000Z') });
  });

  it('claim — runs missed while no replica was up are not replayed one by one', () => {
    const overdue = run({ dueAt: Date.parse('2026-05-01T09:00:00.000Z') });
    expect(planRun(overdue, now, true)).toEqual({ kind: 'start', next: Date.parse('2026-05-01T12:05:00.000Z') });
  });

  it('claim — a run whose record is gone is dropped (deleted, or an interrupted create)', () => {
    expect(planRun(run(), now, false)).toEqual({ kind: 'drop' });
  });

  it('claim — a run whose record may still be on its way is retried shortly, not dropped', () => {
    const young = run({ createdAt: new Date(now.getTime() - CREATE_GRACE_MS + 1_000).toISOString() });
    expect(planRun(young, now, false)).toEqual({ kind: 'retry', at: now.getTime() + 1_000 });
  });

  it('claim — every attempt at a run carries the same idempotency key, and another due time another key', () => {
    expect(runIdempotencyKey(run())).toBe('sch_0123456789abcdef0123456789abcdef@1777636800000');
    expect(runIdempotencyKey(run({ leaseUntil: 1, claimedAt: 2 }))).toBe(runIdempotencyKey(run()));
    expect(runIdempotencyKey(run({ dueAt: run().dueAt + 60_000 }))).not.toBe(runIdempotencyKey(run()));
  });
});
