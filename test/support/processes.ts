import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { spawnService } from '@workspace/testkit';
import type { Stack } from './stack.js';

/** Every replica of a process, by its key in stack.services (`files`, `files#2` …). */
export function replicaKeys(stack: Stack, name: string): string[] {
  return Object.keys(stack.services).filter((k) => k === name || k.startsWith(`${name}#`));
}

/** SIGKILL: no shutdown hook runs, in-flight work is cut wherever it is. */
export async function killProcesses(stack: Stack, keys: string[]): Promise<void> {
  await Promise.all(
    keys.map(async (key) => {
      const { child } = stack.services[key]!;
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    }),
  );
}

/** Starts killed processes again on their ports, as a supervisor would (restartService would wait on a SIGTERM). */
export async function reviveProcesses(stack: Stack, keys: string[]): Promise<void> {
  for (const key of keys) {
    const old = stack.services[key]!;
    const port = String(old.port);
    stack.services[key] = await spawnService(old.name, old.entry, { ...old.env, GRPC_PORT: port, PORT: port });
  }
}

/** Whether a process exists and is not a zombie (Linux: /proc). */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}
