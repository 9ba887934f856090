import { runService } from '@workspace/platform';
import { automationsService } from './service.js';

await runService(automationsService);
