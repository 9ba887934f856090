import type { ServiceClient } from '@workspace/platform';
import type { AgentsServiceService } from '@workspace/proto/workspace/agents/v1/agents';
import type { AgentDirectory, Scope } from '../domain/ports.js';

export type AgentsClient = ServiceClient<typeof AgentsServiceService>;

/** Agents and chats through the agents service, always on behalf of the owning user. */
export class GrpcAgentDirectory implements AgentDirectory {
  readonly #client: AgentsClient;

  constructor(client: AgentsClient) {
    this.#client = client;
  }

  async require(scope: Scope, agentId: string): Promise<void> {
    // GetAgent answers AGENT_NOT_FOUND itself, also for another user's Agent.
    await this.#client.getAgent({ agentId }, { userId: scope.userId, requestId: scope.requestId, signal: scope.signal });
  }

  async startChat(scope: Scope, chat: { agentId: string; title: string; idempotencyKey: string }): Promise<string> {
    const { chatId } = await this.#client.createChat(chat, { userId: scope.userId, requestId: scope.requestId, signal: scope.signal });
    return chatId;
  }
}
