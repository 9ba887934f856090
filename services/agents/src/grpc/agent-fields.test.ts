import { AGENT_FIELD_NAMES, AGENT_FIELDS, type AgentFieldSpec } from '@workspace/platform';
import { AgentConfig as AgentConfigMessage, AgentFields as AgentFieldsMessage } from '@workspace/proto/workspace/agents/v1/agents';
import { describe, expect, it } from 'vitest';
import { contentDigest } from '../domain/digest.js';
import { checkFields, DEFAULTS, editableOf, EDITABLE_FIELDS, fieldsForCreate, type EditableFields } from '../domain/fields.js';
import type { AgentConfig } from '../domain/ports.js';
import { diffFields } from '../domain/versions.js';
import { configToProto, fieldsFromProto } from './agents.mappers.js';

/** A valid stored value of a field that differs from its default, found from its declaration alone. */
function storedSample(spec: AgentFieldSpec): unknown {
  switch (spec.kind) {
    case 'text':
      return 'x'.repeat(Math.max(spec.min, 1));
    case 'enum':
      return spec.values.find((v) => v !== spec.default);
    case 'boolean':
      return !spec.default;
    case 'textList':
      return ['x'.repeat(Math.max(spec.min, 1))];
    case 'knowledgeList':
      return [{ path: '/files/a.md', size: 1, sha256: 'a'.repeat(64), mimeType: 'text/markdown' }];
    case 'connectorList':
      return [{ type: 'x' }];
  }
}

const base: EditableFields = { ...DEFAULTS, name: 'Helper' } as EditableFields;

// "A new field is one edit" (docs/api/agents.md#editable-fields): every field declared in
// AGENT_FIELDS reaches the proto messages, the mappers, the checks, the digest and diffs.
describe('agent fields — the declaration reaches the agents service', () => {
  it('agent fields — the AgentFields message has exactly the declared fields, AgentConfig has each', () => {
    expect(Object.keys(AgentFieldsMessage.create()).sort()).toEqual([...AGENT_FIELD_NAMES].sort());
    const config = Object.keys(AgentConfigMessage.create());
    for (const name of AGENT_FIELD_NAMES) expect(config, name).toContain(name);
  });

  it('agent fields — the stored shape, defaults and editable set are the declared fields', () => {
    expect(EDITABLE_FIELDS).toEqual(AGENT_FIELD_NAMES);
    expect(Object.keys(editableOf(base))).toEqual(AGENT_FIELD_NAMES);
    expect(Object.keys(fieldsForCreate({ name: 'Helper' })).sort()).toEqual([...AGENT_FIELD_NAMES].sort());
  });

  it.each(AGENT_FIELD_NAMES)('agent fields — %s is checked, mapped, digested and diffed', (name) => {
    const value = storedSample(AGENT_FIELDS[name]);
    const changed = { ...base, [name]: value } as EditableFields;
    const config = (fields: EditableFields) => ({ ...fields, schemaVersion: 1, configId: 'c', agentId: 'a', normalizedName: 'helper', createdAt: '', contentDigest: '' }) as AgentConfig;
    // Checked: a value of the wrong type is refused, naming the field.
    expect(() => checkFields({ [name]: 12 })).toThrow(expect.objectContaining({ details: expect.objectContaining({ field: name }) }));
    // Digest input and diffs.
    expect(contentDigest(changed)).not.toBe(contentDigest(base));
    expect(diffFields(config(base), config(changed)).map((op) => op.path.split('/')[1])).toContain(name);
    // proto → fields.
    const message = AgentFieldsMessage.fromPartial({});
    const input = fieldsFromProto({ ...message, ...AgentFieldsMessage.fromJSON({ [name]: wireJson(name, value) }) });
    expect(input[name], name).toBeDefined();
    // config → proto.
    expect((configToProto(config(changed)) as unknown as Record<string, unknown>)[name]).toBeDefined();
  });
});

/** The proto JSON form of a field in AgentFields (its wrappers included). */
function wireJson(name: (typeof AGENT_FIELD_NAMES)[number], value: unknown): unknown {
  const spec = AGENT_FIELDS[name];
  if (spec.kind === 'textList' && !spec.nullable) return { values: value };
  if (spec.kind === 'knowledgeList') return { files: value };
  return value;
}
