// Preloaded (NODE_OPTIONS=--import) into a process of the stack when BENCH_CPU_PROF names it:
// Node 20 refuses --cpu-prof in NODE_OPTIONS, so the profiler is started through the inspector
// and the profile written when the process exits (the services exit on SIGTERM at the end of
// the run), as BENCH_CPU_PROF_DIR/<service>-<pid>.cpuprofile (open it in Chrome DevTools);
// <service> is BENCH_CPU_PROF_NAME when set (the bench's own floors), else the service's folder.
import { Session } from 'node:inspector';
import { writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

const dir = process.env.BENCH_CPU_PROF_DIR;
if (dir) {
  const service = process.env.BENCH_CPU_PROF_NAME ?? basename(dirname(dirname(process.argv[1] ?? 'node')));
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 500 });
  session.post('Profiler.start');
  process.once('exit', () => {
    // Same-thread inspector messages are answered synchronously, so this completes before exit.
    session.post('Profiler.stop', (err, result) => {
      if (!err) writeFileSync(join(dir, `${service}-${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
