// Peer: a bare undici bot on node-cron, the scheduler stacker uses: one signed request a second.
import cron from 'node-cron';
import { signedPost } from './signed-post.mjs';

cron.schedule('* * * * * *', () => signedPost().catch((error) => console.error(error.message)), { timezone: 'UTC', noOverlap: true });
