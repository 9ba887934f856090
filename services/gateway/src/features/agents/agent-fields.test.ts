import { AGENT_FIELD_NAMES, AGENT_FIELDS, type AgentFieldSpec } from '@workspace/platform';
import { AgentConfig as AgentConfigMessage, AgentFields as AgentFieldsMessage } from '@workspace/proto/workspace/agents/v1/agents';
import { describe, expect, it } from 'vitest';
import { configJson, fieldsToProto } from './agents.json.js';
import { AgentConfig, CreateAgentBody, UpdateAgentBody } from './agents.schemas.js';

/** A valid submitted value of a field, found from its declaration alone. */
function submitted(spec: AgentFieldSpec): unknown {
  switch (spec.kind) {
    case 'text':
      return 'x'.repeat(Math.max(spec.min, 1));
    case 'enum':
      return spec.values[0];
    case 'boolean':
      return true;
    case 'textList':
      return ['x'];
    case 'knowledgeList':
      return [{ path: '/files/a.md' }];
    case 'connectorList':
      return [{ type: 'x' }];
  }
}

const body = Object.fromEntries(AGENT_FIELD_NAMES.map((k) => [k, submitted(AGENT_FIELDS[k])]));

// "A new field is one edit" (docs/api/agents.md#editable-fields): every field declared in
// AGENT_FIELDS reaches the proto messages, the request and response schemas, and the mappers.
describe('agent fields — the declaration reaches the gateway', () => {
  it('agent fields — the AgentFields message has exactly the declared fields, AgentConfig has each', () => {
    expect(Object.keys(AgentFieldsMessage.create()).sort()).toEqual([...AGENT_FIELD_NAMES].sort());
    for (const name of AGENT_FIELD_NAMES) expect(Object.keys(AgentConfigMessage.create()), name).toContain(name);
  });

  it('agent fields — create, PATCH and AgentConfig schemas hold every declared field', () => {
    for (const schema of [CreateAgentBody, UpdateAgentBody, AgentConfig]) {
      for (const name of AGENT_FIELD_NAMES) expect(Object.keys(schema.shape), name).toContain(name);
    }
    const parsed = CreateAgentBody.parse(body);
    for (const name of AGENT_FIELD_NAMES) expect(parsed[name], name).toEqual(body[name]);
  });

  it('agent fields — JSON → proto → JSON carries every declared field', () => {
    const message = AgentFieldsMessage.decode(AgentFieldsMessage.encode(fieldsToProto(CreateAgentBody.parse(body))).finish());
    for (const name of AGENT_FIELD_NAMES) expect(message[name], name).toBeDefined();
    const config = AgentConfigMessage.fromPartial({});
    const json = configJson({ ...config, ...Object.fromEntries(AGENT_FIELD_NAMES.map((k) => [k, AgentConfigMessage.fromJSON({ [k]: body[k] })[k]])) } as typeof config);
    for (const name of AGENT_FIELD_NAMES) expect(json[name], name).toEqual(body[name]);
    expect(Object.keys(json)).toEqual(Object.keys(AgentConfig.shape));
  });
});
