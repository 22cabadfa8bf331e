// Peer: a bare undici bot. A timer, one signed request a second, nothing else.
import { signedPost } from './signed-post.mjs';

setInterval(() => signedPost().catch((error) => console.error(error.message)), 1000);
