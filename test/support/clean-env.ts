/**
 * Every test file starts without the developer's own stacker settings: the README has them
 * exported in the shell (STACKER_DATA_DIR, STACKER_BASE_URL, keys …), and the real environment
 * wins over every test's env file, so one exported key turned tests red in a newcomer's shell.
 * Child processes get a clean environment of their own (test/cli/run-cli.ts).
 */
for (const key of Object.keys(process.env)) if (key.toUpperCase().startsWith('STACKER_')) delete process.env[key];
