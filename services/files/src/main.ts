import { runService } from '@workspace/platform';
import { filesService } from './service.js';

await runService(filesService);
