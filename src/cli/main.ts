/** rack-webhooks: the command-line tool's entry point (dist/cli.js; the build adds the shebang). */
import { runCli } from './cli.js';

// `rack-webhooks ... | head` closes the pipe early: that is not an error worth a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

process.exitCode = await runCli(process.argv.slice(2));
