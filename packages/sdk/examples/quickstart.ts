// The README's example, typechecked with the package (`tsc -p tsconfig.json`, in npm test) so that
// it keeps compiling against the generated types; `npm run -s quickstart -w @workspace/sdk` runs it
// (test/sdk.e2e.test.ts does, twice, after the README's tour).
import { createWorkspaceClient, multipart } from '../src/index.js';

const api = createWorkspaceClient({ baseUrl: process.env.API_URL ?? 'http://127.0.0.1:8080', token: process.env.TOKEN ?? '' });

// Runs as often as you like, also after the README's tour: a project that exists already is fine.
const project = await api.POST('/v1/agent/projects', { body: { name: 'Quickstart' } });
if (project.error && project.error.error.code !== 'PROJECT_EXISTS') throw new Error(project.error.error.message);

const upload = await api.POST('/v1/agent/files/upload', {
  params: { query: { onConflict: 'overwrite' } },
  body: { path: '/files/projects/Quickstart/notes.md', file: new File(['hello'], 'notes.md') },
  bodySerializer: multipart,
});
if (upload.error) throw new Error(upload.error.error.message);

const created = await api.POST('/v1/agents', { body: { name: 'Researcher', projectName: 'Quickstart', knowledgeFiles: [{ path: upload.data.path }] } });
if (created.error) throw new Error(created.error.error.message);
const agent = created.data;

// Optimistic concurrency: If-Match names the version this edit is based on.
const updated = await api.PATCH('/v1/agents/{agentId}', {
  params: { path: { agentId: agent.agentId }, header: { 'If-Match': `"${agent.currentConfigId}"` } },
  body: { instructions: 'Cite sources.' },
});
if (updated.error) console.log(updated.error.error.code); // STALE_AGENT_CONFIG (412) when another edit came first

// Query parameters are typed: numbers and booleans, sent as text.
const page = await api.GET('/v1/agents', { params: { query: { page: 1, limit: 20 } } });
const files = await api.GET('/v1/agent/files', { params: { query: { path: '/files/projects', recursive: true } } });
const versions = await api.GET('/v1/agents/{agentId}/versions', { params: { path: { agentId: agent.agentId } } });
console.log(page.data?.pagination.total, files.data?.entries.length, versions.data?.versions.length);

// Bytes: Range is a declared header; parseAs says how to read the body.
const head = await api.GET('/v1/agent/files/download', {
  params: { query: { path: '/files/projects/Quickstart/notes.md' }, header: { Range: 'bytes=0-1' } },
  parseAs: 'text',
});
console.log(head.response.status, head.data); // 206 'he'
