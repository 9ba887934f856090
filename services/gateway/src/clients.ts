import type { ServiceClient } from '@workspace/platform';
import type { AgentsServiceService } from '@workspace/proto/workspace/agents/v1/agents';
import type { AutomationsServiceService } from '@workspace/proto/workspace/automations/v1/automations';
import { OnConflict, type FilesServiceService } from '@workspace/proto/workspace/files/v1/files';
import type { ProjectsServiceService } from '@workspace/proto/workspace/projects/v1/projects';
import type { WebhooksServiceService } from '@workspace/proto/workspace/webhooks/v1/webhooks';

/**
 * The gateway's view of the services behind it: one gRPC client type per service, in one place,
 * so that routes, the byte path and the protocol adapters name them without importing each other.
 */
export type ProjectsClient = ServiceClient<typeof ProjectsServiceService>;
export type AgentsClient = ServiceClient<typeof AgentsServiceService>;
export type FilesClient = ServiceClient<typeof FilesServiceService>;
export type AutomationsClient = ServiceClient<typeof AutomationsServiceService>;
export type WebhooksClient = ServiceClient<typeof WebhooksServiceService>;

/** One gRPC client per downstream service. */
export interface Clients {
  projects: ProjectsClient;
  agents: AgentsClient;
  files: FilesClient;
  /** Schedules and webhook triggers; without it their routes are absent and the list shows no schedules. */
  automations?: AutomationsClient | undefined;
  /** Outbound webhooks; without it their routes are absent. */
  webhooks?: WebhooksClient | undefined;
}

/** `onConflict` as the API spells it (docs/api/files.md#upload, docs/api/files.md#move-and-copy), and the files service's value of each. */
export const CONFLICT_MODES = {
  error: OnConflict.ON_CONFLICT_ERROR,
  overwrite: OnConflict.ON_CONFLICT_OVERWRITE,
  uuid: OnConflict.ON_CONFLICT_UUID,
} as const satisfies Record<string, OnConflict>;

export type ConflictMode = keyof typeof CONFLICT_MODES;

/** The files service's value of a mode, or undefined for anything else (a form field is not schema-checked). */
export function conflictMode(mode: string): OnConflict | undefined {
  return Object.hasOwn(CONFLICT_MODES, mode) ? CONFLICT_MODES[mode as ConflictMode] : undefined;
}
