// The calibration block of a run: what this machine is and how fast it is today at the two
// things every scenario leans on (a Redis command from ioredis, a bare Express answer), so that
// runs on different days, or machines, can be read side by side. Figures are never compared
// across runs without it: the same commit measured 3–4× apart on this kind of machine.
import { cpus, release } from 'node:os';
import { Redis } from 'ioredis';
import { startBaselineServer } from './baseline-server.mjs';
import { cannon } from './http.mjs';

/** ioredis client CPU per command (µs), 32 commands in flight, median of three rounds of `count`. */
async function ioredisMicros(redisUrl, count) {
  const redis = new Redis(redisUrl, { lazyConnect: true });
  await redis.connect();
  try {
    const rounds = [];
    for (let round = 0; round < 4; round++) {
      const before = process.cpuUsage();
      for (let sent = 0; sent < count; sent += 32) await Promise.all(Array.from({ length: 32 }, () => redis.get('bench:calibration')));
      const used = process.cpuUsage(before);
      // The first round warms the client up and is not counted.
      if (round > 0) rounds.push((used.user + used.system) / count);
    }
    rounds.sort((a, b) => a - b);
    return Number(rounds[1].toFixed(1));
  } finally {
    await redis.quit();
  }
}

/** Requests a second a bare Express 5 process answers (a 1.8 KB JSON body, 32 connections). */
async function bareExpressRps(seconds) {
  const server = await startBaselineServer({ agentId: 'agt_calibration', currentConfigId: 'cfg_calibration', name: 'x'.repeat(1800) });
  try {
    const run = await cannon({ url: `${server.url}/v1/agents/agt_calibration`, connections: 32, duration: seconds, warmupS: Math.min(1, seconds) });
    return Math.round(run.rps);
  } finally {
    await server.stop();
  }
}

/** → {kernel, cpuModel, cpus, node, ioredisMicrosPerCommand, bareExpressReqPerS}. */
export async function calibrate({ redisUrl, scale }) {
  const tiny = scale.name.startsWith('tiny');
  return {
    kernel: release(),
    cpuModel: cpus()[0]?.model ?? 'unknown',
    cpus: cpus().length,
    node: process.version,
    ioredisMicrosPerCommand: redisUrl ? await ioredisMicros(redisUrl, tiny ? 640 : 6400) : null,
    bareExpressReqPerS: await bareExpressRps(tiny ? 1 : 3),
  };
}
