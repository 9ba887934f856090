import { runService } from '@workspace/platform';
import { projectsService } from './service.js';

await runService(projectsService);
