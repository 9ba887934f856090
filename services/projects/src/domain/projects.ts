import { errors } from '@workspace/platform';
import { assertProjectName, HOME_PROJECT, projectKey } from './project-name.js';
import { contextFilePath, renderContextFile } from './context-file.js';
import type { Clock, ProjectRecord, ProjectRepo, WorkspaceFiles } from './ports.js';

export const GOAL_MAX = 4_000;
export const INSTRUCTIONS_MAX = 64_000;

export interface ProjectChange {
  goal?: string | undefined;
  instructions?: string | undefined;
  archived?: boolean | undefined;
}

function assertMax(value: string | undefined, max: number, field: string) {
  if (value !== undefined && value.length > max) throw errors.invalidArgument(`${field} must be at most ${max} characters`, field);
}

/** The rules of projects (docs/api/projects.md), over a repository and the user's workspace files. */
export class Projects {
  readonly #repo: ProjectRepo;
  readonly #files: WorkspaceFiles;
  readonly #now: Clock;

  constructor(options: { repo: ProjectRepo; files: WorkspaceFiles; clock?: Clock }) {
    this.#repo = options.repo;
    this.#files = options.files;
    this.#now = options.clock ?? (() => new Date());
  }

  /**
   * Inserts the record, then writes its context file before anyone is told the project
   * exists. The insert comes first because it is what decides a name race (only the winner
   * writes the file); if the file cannot be written the insert is undone, so a retry starts
   * clean instead of finding a project without its context file.
   */
  async #insertWithContextFile(userId: string, key: string, record: ProjectRecord): Promise<boolean> {
    if (!(await this.#repo.insert(userId, key, record))) return false;
    try {
      await this.#files.writeText(userId, contextFilePath(record.name), renderContextFile(record));
    } catch (err) {
      await this.#repo.remove(userId, key).catch(() => undefined);
      throw err;
    }
    return true;
  }

  /** Makes sure the user has Home; true when this call created it. */
  async ensureHome(userId: string): Promise<boolean> {
    const at = this.#now().toISOString();
    return this.#insertWithContextFile(userId, projectKey(HOME_PROJECT), {
      name: HOME_PROJECT,
      goal: '',
      instructions: '',
      archived: false,
      createdAt: at,
      updatedAt: at,
    });
  }

  async create(userId: string, input: { name: string; goal?: string; instructions?: string }): Promise<ProjectRecord> {
    assertProjectName(input.name);
    assertMax(input.goal, GOAL_MAX, 'goal');
    assertMax(input.instructions, INSTRUCTIONS_MAX, 'instructions');
    const key = projectKey(input.name);
    if (key === projectKey(HOME_PROJECT)) await this.ensureHome(userId);
    const at = this.#now().toISOString();
    const record: ProjectRecord = {
      name: input.name,
      goal: input.goal ?? '',
      instructions: input.instructions ?? '',
      archived: false,
      createdAt: at,
      updatedAt: at,
    };
    if (!(await this.#insertWithContextFile(userId, key, record))) throw errors.projectExists(input.name);
    return record;
  }

  /** Case-insensitive lookup; PROJECT_NOT_FOUND when absent. */
  async get(userId: string, name: string): Promise<ProjectRecord> {
    const key = projectKey(name);
    let record = await this.#repo.get(userId, key);
    if (!record && key === projectKey(HOME_PROJECT) && (await this.ensureHome(userId))) {
      record = await this.#repo.get(userId, key);
    }
    if (!record) throw errors.notFound('project', name);
    return record;
  }

  /** Sorted by name, case-insensitively; archived ones only when asked for. */
  async list(userId: string, includeArchived: boolean): Promise<ProjectRecord[]> {
    let records = await this.#repo.list(userId);
    if (!records.some((r) => projectKey(r.name) === projectKey(HOME_PROJECT)) && (await this.ensureHome(userId))) {
      records = await this.#repo.list(userId);
    }
    return records
      .filter((r) => includeArchived || !r.archived)
      .sort((a, b) => compareKeys(projectKey(a.name), projectKey(b.name)) || compareKeys(a.name, b.name));
  }

  /** Changes goal, instructions or archived; `updatedAt` moves only when a value changes. */
  async update(userId: string, name: string, change: ProjectChange): Promise<ProjectRecord> {
    assertMax(change.goal, GOAL_MAX, 'goal');
    assertMax(change.instructions, INSTRUCTIONS_MAX, 'instructions');
    const key = projectKey(name);
    if (change.archived === true && key === projectKey(HOME_PROJECT)) {
      throw errors.invalidArgument('Home cannot be archived', 'archived');
    }
    await this.get(userId, name);
    const updated = await this.#repo.update(userId, key, (current) => {
      const next = {
        ...current,
        goal: change.goal ?? current.goal,
        instructions: change.instructions ?? current.instructions,
        archived: change.archived ?? current.archived,
      };
      const same = next.goal === current.goal && next.instructions === current.instructions && next.archived === current.archived;
      return same ? current : { ...next, updatedAt: this.#now().toISOString() };
    });
    if (!updated) throw errors.notFound('project', name);
    return updated;
  }
}

function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
