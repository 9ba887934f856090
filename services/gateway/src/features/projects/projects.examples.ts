import { CREATED_AT, UPDATED_AT } from '../../api/ids.examples.js';

/** Examples of the project routes (docs/api/projects.md). */

export const createProjectBody = { name: 'Launch plan', goal: 'Ship v2 by June', instructions: 'Keep answers short.' };

export const project = {
  name: 'Launch plan',
  goal: 'Ship v2 by June',
  instructions: 'Keep answers short.',
  archived: false,
  createdAt: CREATED_AT,
  updatedAt: CREATED_AT,
  threads: [],
};

export const updateProjectBody = { name: 'Launch plan', goal: 'Ship v2 by July' };

export const updatedProject = { ...project, goal: 'Ship v2 by July', updatedAt: UPDATED_AT };

export const projectList = {
  projects: [
    { name: 'Home', goal: '', archived: false, createdAt: CREATED_AT, updatedAt: CREATED_AT, threads: [] },
    { name: 'Launch plan', goal: 'Ship v2 by June', archived: false, createdAt: CREATED_AT, updatedAt: CREATED_AT, threads: [] },
  ],
};
