import { projectKey } from './project-name.js';
import type { ThreadRepo, ThreadSummary } from './ports.js';

/** What a chat.created event tells the projection. */
export interface ChatCreated {
  userId: string;
  chatId: string;
  agentId: string;
  projectName: string;
  title: string;
  createdAt: string;
  updatedAt: string;
}

/**
 * The `threads` of projects, kept from chat events: a chat of an Agent bound to a project is a
 * thread of that project; when the Agent goes, its threads go. Both are idempotent, so an
 * event delivered twice changes nothing.
 */
export class ThreadProjection {
  readonly #repo: ThreadRepo;

  constructor(repo: ThreadRepo) {
    this.#repo = repo;
  }

  async chatCreated(event: ChatCreated): Promise<void> {
    const thread: ThreadSummary = { threadId: event.chatId, title: event.title, agentId: event.agentId, createdAt: event.createdAt, updatedAt: event.updatedAt };
    await this.#repo.add(event.userId, projectKey(event.projectName), thread);
  }

  async agentDeleted(userId: string, agentId: string): Promise<void> {
    await this.#repo.removeAgent(userId, agentId);
  }

  /** Threads of each project name, in the order given. */
  async of(userId: string, names: readonly string[]): Promise<ThreadSummary[][]> {
    return this.#repo.forProjects(userId, names.map(projectKey));
  }
}
