import { z } from 'zod';
import { ROOT } from '@workspace/platform';
import { defineTool, READ_ONLY } from './tool.js';

/**
 * Where the tools may reach, as the reference filesystem server answers it, so that an agent made
 * for it finds its root. A user's token reaches the whole workspace: /files.
 */
export const listAllowedDirectories = defineTool({
  name: 'list_allowed_directories',
  title: 'List allowed directories',
  description: 'The directories the tools reach: /files. Relative paths are taken from it.',
  input: z.strictObject({}),
  output: z.object({ directories: z.array(z.string()) }),
  annotations: READ_ONLY,
  run: async () => {
    const directories = [ROOT];
    return { text: `Allowed directories:\n${directories.join('\n')}`, structured: { directories } };
  },
});
