import { runService } from '@workspace/platform';
import { webhooksService } from './service.js';

await runService(webhooksService);
