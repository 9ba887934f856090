import { runService } from '@workspace/platform';
import { agentsService } from './service.js';

await runService(agentsService);
