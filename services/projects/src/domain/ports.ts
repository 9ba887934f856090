/** A project as stored. Thread summaries are a separate projection and not part of it. */
export interface ProjectRecord {
  name: string;
  goal: string;
  instructions: string;
  archived: boolean;
  createdAt: string;
  updatedAt: string;
}

/** Persistence of one user's projects, keyed by `projectKey(name)`. */
export interface ProjectRepo {
  /** Stores `record` unless the key is taken; false when it was (atomic, never overwrites). */
  insert(userId: string, key: string, record: ProjectRecord): Promise<boolean>;
  get(userId: string, key: string): Promise<ProjectRecord | undefined>;
  list(userId: string): Promise<ProjectRecord[]>;
  /**
   * Replaces the record with `change(current)` atomically: if another writer got there first,
   * `change` runs again on the newer record. `change` returning `current` writes nothing.
   */
  update(userId: string, key: string, change: (current: ProjectRecord) => ProjectRecord): Promise<ProjectRecord | undefined>;
  /** Deletes the record (undoes an insert whose context file could not be written). */
  remove(userId: string, key: string): Promise<void>;
}

/** The user's workspace files, kept by the files service. */
export interface WorkspaceFiles {
  /** Writes a small UTF-8 text file at a workspace path, replacing any file there. */
  writeText(userId: string, path: string, content: string): Promise<void>;
}

export type Clock = () => Date;

/** A thread of a project: a chat started by an Agent bound to it (docs/api/projects.md#threads). */
export interface ThreadSummary {
  threadId: string;
  title: string;
  agentId: string;
  createdAt: string;
  updatedAt: string;
}

/** The thread summaries of a user's projects, a projection of chat events. */
export interface ThreadRepo {
  /**
   * Records a thread under a project (by its key) unless its Agent is known to be deleted;
   * false when it was not recorded for that reason. Recording one twice changes nothing.
   */
  add(userId: string, projectKey: string, thread: ThreadSummary): Promise<boolean>;
  /** Forgets every thread of an Agent and remembers that the Agent is gone. Idempotent. */
  removeAgent(userId: string, agentId: string): Promise<void>;
  /** Threads of each project key, newest createdAt first. */
  forProjects(userId: string, projectKeys: readonly string[]): Promise<ThreadSummary[][]>;
}
