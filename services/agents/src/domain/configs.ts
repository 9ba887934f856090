import { canonicalJson, contentDigest, SCHEMA_VERSION } from './digest.js';
import { EDITABLE_FIELDS, editableOf, type EditableFields } from './fields.js';
import { newId } from './ids.js';
import type { Lineage } from './lineage.js';
import type { AgentConfig, AgentSummary } from './ports.js';
import { normalizeText, projectKey } from './text.js';

/** A new immutable configuration of `agentId` holding `fields`. */
export function buildConfig(agentId: string, fields: EditableFields, createdAt: string, lineage: Partial<Lineage> = {}): AgentConfig {
  const content = editableOf(fields);
  return {
    schemaVersion: SCHEMA_VERSION,
    configId: newId('cfg'),
    agentId,
    ...content,
    normalizedName: normalizeText(content.name),
    createdAt,
    contentDigest: contentDigest(content),
    changeNote: lineage.changeNote ?? '',
    parentConfigId: lineage.parentConfigId ?? null,
  };
}

export function summarize(config: AgentConfig): AgentSummary {
  return {
    name: config.name,
    description: config.description,
    projectName: config.projectName,
    responseMode: config.responseMode,
    searchName: config.normalizedName,
    searchDescription: normalizeText(config.description),
  };
}

/**
 * True when every submitted field already has its current value: check (1) of a PATCH.
 * Project names compare case-insensitively (they name the same project); JSON values by
 * their canonical form, so key order in a connector does not matter.
 */
export function sameAsCurrent(submitted: Partial<EditableFields>, current: EditableFields): boolean {
  return EDITABLE_FIELDS.every((key) => {
    const value = submitted[key];
    if (value === undefined) return true;
    if (key === 'projectName') return projectKey(value as string) === projectKey(current.projectName);
    return canonicalJson(value) === canonicalJson(current[key]);
  });
}
