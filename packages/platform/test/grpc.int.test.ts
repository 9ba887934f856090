import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { ProjectsServiceService, type Project } from '@workspace/proto/workspace/projects/v1/projects';
import { AppError, createClient, createHealthChecker, createLogger, errors, GrpcServer, HealthReporter, requireUser, type AsyncService } from '../src/index.js';

const logger = createLogger('test', 'silent');
const project = (name: string): Project => ({ name, goal: '', instructions: '', archived: false, createdAt: '', updatedAt: '', threads: [] });

function handlers(overrides: Partial<AsyncService<typeof ProjectsServiceService>> = {}): AsyncService<typeof ProjectsServiceService> {
  return {
    ensureHome: async () => ({ created: false }),
    createProject: async (req, ctx) => project(`${req.name}:${requireUser(ctx)}:${ctx.requestId}`),
    listProjects: async () => ({ projects: [] }),
    getProject: async (req) => {
      throw errors.notFound('project', req.name);
    },
    updateProject: async () => {
      throw new Error('secret backend detail at 10.1.2.3');
    },
    ...overrides,
  };
}

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function serve(impl = handlers()) {
  const server = new GrpcServer(logger).add(ProjectsServiceService, impl);
  const port = await server.listen('127.0.0.1', 0);
  const client = createClient(ProjectsServiceService, { serviceName: 'projects', address: `127.0.0.1:${port}`, deadlineMs: 2_000 });
  cleanup.push(() => server.server.forceShutdown(), () => client.close());
  return { server, client, port };
}

describe('grpc kit', () => {
  it('grpc kit — user and request id travel as metadata', async () => {
    const { client } = await serve();
    const res = await client.createProject({ name: 'p', goal: '', instructions: '' }, { userId: 'alice', requestId: 'req-1' });
    expect(res.name).toBe('p:alice:req-1');
    await expect(client.createProject({ name: 'p', goal: '', instructions: '' })).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it('grpc kit — any user id travels unchanged (binary metadata): non-ASCII, surrounding spaces, a BOM, 256 emoji', async () => {
    const { client } = await serve();
    for (const userId of ['josé', '用户', ' alice ', '\t tab and spaces \t', '\uFEFFbom', 'line\nbreak', '😀'.repeat(256)]) {
      const res = await client.createProject({ name: 'p', goal: '', instructions: '' }, { userId, requestId: 'r' });
      expect(res.name, JSON.stringify(userId)).toBe(`p:${userId}:r`);
    }
  });

  it('grpc kit — our errors keep their code; unexpected ones become INTERNAL without their text', async () => {
    const { client } = await serve();
    await expect(client.getProject({ name: 'x' }, { userId: 'u' })).rejects.toMatchObject({ code: 'PROJECT_NOT_FOUND', message: 'project not found: x' });
    const err = (await client.updateProject({ name: 'x' }, { userId: 'u' }).catch((e: unknown) => e)) as AppError;
    expect(err.code).toBe('INTERNAL');
    expect(err.message).not.toContain('10.1.2.3');
  });

  it('grpc kit — every call has a deadline', async () => {
    const { client } = await serve(handlers({ listProjects: async () => (await sleep(1_000), { projects: [] }) }));
    const started = Date.now();
    await expect(client.listProjects({ includeArchived: false }, { userId: 'u', deadlineMs: 100 })).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(Date.now() - started).toBeLessThan(900);
  });

  it('grpc kit — a server that is not there answers UNAVAILABLE', async () => {
    const client = createClient(ProjectsServiceService, { serviceName: 'projects', address: '127.0.0.1:1', deadlineMs: 500 });
    cleanup.push(() => client.close());
    await expect(client.listProjects({ includeArchived: false })).rejects.toMatchObject({ code: 'UNAVAILABLE', message: 'the projects service is unavailable; retry later' });
  });

  it('grpc kit — drain lets in-flight calls finish and refuses new ones', async () => {
    const { server, client } = await serve(handlers({ listProjects: async () => (await sleep(300), { projects: [project('slow')] }) }));
    const inFlight = client.listProjects({ includeArchived: false }, { userId: 'u' });
    await sleep(50);
    const drained = server.drain(5_000);
    const res = await inFlight;
    expect(res.projects[0]?.name).toBe('slow');
    await drained;
    await expect(client.listProjects({ includeArchived: false }, { userId: 'u', deadlineMs: 300 })).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  });

  it('grpc kit — idempotent methods are retried on UNAVAILABLE, others are not', async () => {
    let getCalls = 0;
    let createCalls = 0;
    const server = new GrpcServer(logger).add(ProjectsServiceService, handlers({
      getProject: async (req) => {
        if (++getCalls < 3) throw errors.unavailable('backend');
        return project(req.name);
      },
      createProject: async () => {
        createCalls++;
        throw errors.unavailable('backend');
      },
    }));
    const port = await server.listen('127.0.0.1', 0);
    const client = createClient(ProjectsServiceService, { serviceName: 'projects', address: `127.0.0.1:${port}`, deadlineMs: 2_000, idempotent: ['getProject'] });
    cleanup.push(() => server.server.forceShutdown(), () => client.close());
    expect((await client.getProject({ name: 'p' }, { userId: 'u' })).name).toBe('p');
    expect(getCalls).toBe(3);
    await expect(client.createProject({ name: 'p', goal: '', instructions: '' }, { userId: 'u' })).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(createCalls).toBe(1);
  });

  it('grpc kit — calls round-robin over replicas, and draining one loses no call', async () => {
    const seen: string[] = [];
    const replica = async (name: string) => {
      const server = new GrpcServer(logger).add(ProjectsServiceService, handlers({
        listProjects: async () => {
          seen.push(name);
          await sleep(5);
          return { projects: [project(name)] };
        },
      }));
      return { server, port: await server.listen('127.0.0.1', 0) };
    };
    const a = await replica('a');
    const b = await replica('b');
    const client = createClient(ProjectsServiceService, { serviceName: 'projects', address: `ipv4:127.0.0.1:${a.port},127.0.0.1:${b.port}`, deadlineMs: 2_000, idempotent: ['listProjects'] });
    cleanup.push(() => a.server.server.forceShutdown(), () => b.server.server.forceShutdown(), () => client.close());
    // Round robin spreads over the replicas whose connections are ready; both are, shortly.
    await expect
      .poll(async () => {
        seen.length = 0;
        await Promise.all(Array.from({ length: 10 }, () => client.listProjects({ includeArchived: false }, { userId: 'u' })));
        return new Set(seen).size;
      })
      .toBe(2);
    const failures: unknown[] = [];
    let stop = false;
    const traffic = (async () => {
      while (!stop) await client.listProjects({ includeArchived: false }, { userId: 'u' }).catch((err: unknown) => failures.push(err));
    })();
    const traffic2 = (async () => {
      while (!stop) await client.listProjects({ includeArchived: false }, { userId: 'u' }).catch((err: unknown) => failures.push(err));
    })();
    await sleep(100);
    await a.server.drain(2_000);
    seen.length = 0;
    await sleep(200);
    stop = true;
    await Promise.all([traffic, traffic2]);
    expect(failures).toEqual([]);
    expect(seen.length).toBeGreaterThan(0);
    expect(new Set(seen)).toEqual(new Set(['b']));
  });

  it('grpc kit — health follows the backend probe and turns off for good on stop', async () => {
    let backendUp = true;
    const server = new GrpcServer(logger).add(ProjectsServiceService, handlers());
    const health = new HealthReporter({ logger, probe: async () => {
      if (!backendUp) throw new Error('down');
    } });
    health.addTo(server.server);
    const port = await server.listen('127.0.0.1', 0);
    const checker = createHealthChecker(`127.0.0.1:${port}`);
    cleanup.push(() => server.server.forceShutdown(), () => checker.close(), () => health.stop());
    await health.start(50);
    expect(await checker.check(1_000)).toBe(true);
    backendUp = false;
    await expect.poll(() => checker.check(1_000)).toBe(false);
    backendUp = true;
    await expect.poll(() => checker.check(1_000)).toBe(true);
    health.stop();
    expect(await checker.check(1_000)).toBe(false);
  });
});
