import { describe, expect, it } from 'vitest';
import type { DueRun } from './ports.js';
import { CREATE_GRACE_MS, planRun } from './scheduler.js';

const now = new Date('2026-05-01T12:00:00.400Z');
const run = (extra: Partial<DueRun> = {}): DueRun => ({
  scheduleId: 'sch_0123456789abcdef0123456789abcdef',
  userId: 'u',
  agentId: 'agt_0123456789abcdef0123456789abcdef',
  cron: '*/5 * * * *',
  timezone: 'UTC',
  createdAt: '2026-05-01T10:00:00.000Z',
  dueAt: Date.parse('2026-05-01T12:00:00.000Z'),
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
});
