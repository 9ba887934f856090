import type { Logger } from 'pino';

type Step = { name: string; run: () => Promise<unknown> | unknown };

/**
 * Runs the registered steps in order on SIGTERM or SIGINT (readiness off first, then drain,
 * then close clients), once, and exits. A step that hangs past `timeoutMs` is abandoned so the
 * process still exits within the orchestrator's grace period.
 */
export function onShutdown(logger: Logger, steps: Step[], timeoutMs = 25_000): () => Promise<void> {
  let running: Promise<void> | undefined;
  const shutdown = () => {
    running ??= (async () => {
      logger.info('shutting down');
      const timer = setTimeout(() => {
        logger.error('shutdown timed out; exiting');
        process.exit(1);
      }, timeoutMs);
      timer.unref();
      for (const step of steps) {
        try {
          await step.run();
        } catch (err) {
          logger.error({ err, step: step.name }, 'shutdown step failed');
        }
      }
      logger.info('stopped');
    })();
    return running;
  };
  const onSignal = () => void shutdown().then(() => process.exit(0));
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  return shutdown;
}
