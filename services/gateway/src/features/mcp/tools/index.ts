import { readFile, readMediaFile, readMultipleFiles, readTextFile } from './read.tools.js';
import { editFileTool, writeFileTool } from './write.tools.js';
import { directoryTree, listDirectory, listDirectoryWithSizes, searchFiles } from './list.tools.js';
import { copyFileTool, createDirectoryTool, deleteFileTool, getFileInfo, moveFileTool } from './manage.tools.js';
import { listRevisions, restoreFile } from './history.tools.js';
import { listProjects } from './projects.tools.js';
import { listAllowedDirectories } from './scope.tools.js';
import { createCheckpointTool, grepTool, rewindTool } from './tree.tools.js';
import type { ToolDef } from './tool.js';

/** Every tool of docs/api/mcp.md#tools, in the order tools/list gives them; a new tool is one line here. */
export const TOOLS: readonly ToolDef[] = [
  readFile,
  readTextFile,
  readMediaFile,
  readMultipleFiles,
  writeFileTool,
  editFileTool,
  createDirectoryTool,
  listDirectory,
  listDirectoryWithSizes,
  directoryTree,
  moveFileTool,
  searchFiles,
  getFileInfo,
  listAllowedDirectories,
  copyFileTool,
  deleteFileTool,
  listRevisions,
  restoreFile,
  grepTool,
  createCheckpointTool,
  rewindTool,
  listProjects,
];
