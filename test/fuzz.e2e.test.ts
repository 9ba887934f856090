import { randomBytes } from 'node:crypto';
import { appendFileSync, writeFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRequest, type Credentials } from './support/fuzz/build.js';
import { isFailure, wireClient } from './support/fuzz/http.js';
import { operationsOf, type OpenApiDoc, type Operation } from './support/fuzz/operations.js';
import { distinct, formatFindings, formatStats, recipeArb, Runner, type Finding } from './support/fuzz/runner.js';
import { describeBuilt } from './support/fuzz/recipe.js';
import { credentialsFor, seedSelf, seedVictim } from './support/fuzz/seed.js';
import { textFields, withText } from './support/fuzz/text-fields.js';
import { validParts } from './support/fuzz/valid.js';
import { World } from './support/fuzz/world.js';
import { request, startStack, type Stack } from './support/stack.js';

/**
 * Generated requests, valid and invalid, to every operation of the gateway's OpenAPI document:
 * no 5xx, the contract's envelope and the table's status on every error, and never a byte of
 * another user's data. FUZZ_SEED replays a run; FUZZ_RUNS changes its length; FUZZ_KEEP_GOING=1
 * sends every run and lists each distinct defect instead of stopping at the first; FUZZ_TRACE=<file>
 * writes every exchange there.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20_240_611);
const MIN_REQUESTS = 5_000;
const IN_FLIGHT = 16;
/** Requests of each operation in one run (a run is one batch, sent IN_FLIGHT at a time). */
const PER_OP = 2;
const KEEP_GOING = process.env.FUZZ_KEEP_GOING === '1';
const TRACE = process.env.FUZZ_TRACE;
/** Far above what the fuzzer sends: throttling would hide the answers it is after. */
const UNLIMITED = { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_BURST: '100000', MAX_CONCURRENT_UPLOADS: '100000' };

let stack: Stack;
let doc: OpenApiDoc;
let operations: Operation[];
let world: World;
let runner: Runner;
let credentials: Credentials;
let send: ReturnType<typeof wireClient>['send'];
let close: () => void;

beforeAll(async () => {
  stack = await startStack({ gatewayEnv: UNLIMITED });
  const res = await request(`${stack.url}/openapi.json`, {});
  expect(res.status).toBe(200);
  doc = res.body as OpenApiDoc;
  operations = operationsOf(doc);
  const tag = randomBytes(4).toString('hex');
  const [victim, self] = await Promise.all([seedVictim(stack), stack.user()]);
  world = new World(await seedSelf(stack, self, tag), victim, tag);
  const client = wireClient(stack.url, IN_FLIGHT);
  close = client.close;
  send = client.send;
  credentials = await credentialsFor(stack, self);
  if (TRACE) writeFileSync(TRACE, '');
  const trace = TRACE ? (line: string) => appendFileSync(TRACE, `${line}\n`) : undefined;
  runner = new Runner(client.send, world, credentials, IN_FLIGHT, trace);
}, 120_000);

afterAll(async () => {
  close?.();
  await stack?.stop();
});

describe('fuzz — generated requests to every operation', () => {
  it('fuzz — no 5xx, the envelope on every error, no other user\u2019s data', async () => {
    const batchSize = operations.length * PER_OP;
    const runs = Number(process.env.FUZZ_RUNS ?? Math.ceil(MIN_REQUESTS / batchSize) + 2);
    const components = doc.components.schemas;
    const batch = fc.tuple(...operations.flatMap((op) => Array.from({ length: PER_OP }, () => recipeArb(op, components))));
    const all: Finding[] = [];
    const started = performance.now();
    let failure: unknown;
    try {
      await fc.assert(
        fc.asyncProperty(batch, async (recipes) => {
          const findings = await runner.batch(recipes);
          all.push(...findings);
          if (findings.length > 0 && !KEEP_GOING) throw new Error(`${findings.length} broken promise(s) in this batch:\n${formatFindings(distinct(findings))}`);
        }),
        { numRuns: runs, seed: SEED, endOnFailure: true },
      );
    } catch (err) {
      failure = err;
    }
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(`fuzz: seed ${SEED}, up to ${runs} runs × ${batchSize} requests; ${runner.sent} sent in ${seconds} s\n${formatStats(runner.stats)}`);
    if (failure) {
      console.error(`fuzz: FAILED with seed ${SEED} (replay: FUZZ_SEED=${SEED}); distinct defects so far:\n${formatFindings(distinct(all))}`);
      throw failure;
    }
    expect(runner.sent).toBeGreaterThanOrEqual(process.env.FUZZ_RUNS ? runs * batchSize : MIN_REQUESTS);
    // Every operation of the document was sent valid and invalid input, and valid input worked at
    // at least once — except where a valid request needs what only a protocol client makes (tus
    // headers and upload URLs, a signed link token, an archive made by an export): those are
    // fuzzed for the oracle's rules here and driven to success by their own suites (tus.e2e,
    // links.e2e, agents-export.e2e). Likewise what needs a checkpoint id the fuzzer never holds, a
    // folder where its seeded tree leaves none free, or an MCP client's session
    // (files-checkpoints.e2e, files-directories.e2e, mcp.e2e).
    const protocolOnly = new Set([
      'downloadFileLink', 'createResumableUpload', 'getResumableUpload', 'appendResumableUpload', 'terminateResumableUpload', 'importAgent',
      'createDirectory', 'getCheckpoint', 'deleteCheckpoint', 'rewindFiles', 'mcpPost', 'mcpStream', 'mcpEndSession',
    ]);
    const missing = operations.filter((op) => {
      const s = runner.stats.get(op.id);
      return !s || s.valid === 0 || s.invalid === 0 || (s.ok === 0 && !protocolOnly.has(op.id));
    });
    expect(missing.map((op) => op.id)).toEqual([]);
    expect(formatFindings(distinct(all)), 'distinct defects').toBe('');
  }, 240_000);

  it('fuzz — a lone surrogate in any JSON text field is refused (4xx), never stored as U+FFFD', async () => {
    const components = doc.components.schemas;
    const fields = textFields(operations, components);
    expect(fields.length).toBeGreaterThan(20);
    const cases = fc.constantFrom(...fields).chain((field) => fc.tuple(fc.constant(field), validParts(field.op, components), fc.constantFrom('\ud800', 'a\udfffb', '\udc00\ud800', 'x\ud83d')));
    await fc.assert(
      fc.asyncProperty(cases, async ([field, parts, text]) => {
        const built = buildRequest(field.op, withText(parts, field, text), world, credentials);
        const res = await send(built);
        const status = isFailure(res) ? res.error : res.status;
        if (isFailure(res) || res.status < 400 || res.status >= 500) throw new Error(`${field.op.id} ${field.field}: ${status}\n  → ${describeBuilt(built)}\n  ← ${isFailure(res) ? '' : res.text.slice(0, 300)}`);
      }),
      { numRuns: fields.length * 4, seed: SEED, endOnFailure: true },
    );
  }, 120_000);
});
