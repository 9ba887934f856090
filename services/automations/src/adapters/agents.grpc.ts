import type { ServiceClient } from '@workspace/platform';
import type { AgentsServiceService } from '@workspace/proto/workspace/agents/v1/agents';
import type { AgentDirectory, Scope, StartChat } from '../domain/ports.js';

export type AgentsClient = ServiceClient<typeof AgentsServiceService>;

/** Agents and chats through the agents service, always on behalf of the owning user. */
export class GrpcAgentDirectory implements AgentDirectory {
  readonly #client: AgentsClient;

  constructor(client: AgentsClient) {
    this.#client = client;
  }

  async require(scope: Scope, agentId: string, alias?: string): Promise<void> {
    const call = { userId: scope.userId, requestId: scope.requestId, signal: scope.signal };
    // Both answer AGENT_NOT_FOUND themselves, also for another user's Agent; ResolveAlias also ALIAS_NOT_FOUND.
    if (alias !== undefined) await this.#client.resolveAlias({ agentId, alias }, call);
    else await this.#client.getAgent({ agentId }, call);
  }

  async startChat(scope: Scope, chat: StartChat): Promise<string> {
    const { chatId } = await this.#client.createChat(chat, { userId: scope.userId, requestId: scope.requestId, signal: scope.signal });
    return chatId;
  }
}
