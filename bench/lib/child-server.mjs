// Starts one of the bench's own servers (baseline, floor, relay) as a child process running
// `moduleUrl` with `env`; the child says {"msg":"listening","port":N} over IPC when it serves.
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

/** Resolves with {port, pid, stop()} once the child listens; rejects if it exits first. */
export async function forkServer(moduleUrl, env, what) {
  const child = fork(fileURLToPath(moduleUrl), [], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const [message] = await Promise.race([
    once(child, 'message'),
    once(child, 'exit').then(([code]) => {
      throw new Error(`${what} exited with ${code}`);
    }),
  ]);
  return {
    port: message.port,
    pid: child.pid,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}
