// `stacker` as a user runs it, in this process, printing on exit what the whole process cost
// (Node's start included): one JSON line on stderr, {"wallMs","peakRssMb"}.
process.on('exit', () => {
  process.stderr.write(`\n${JSON.stringify({ wallMs: performance.now(), peakRssMb: process.resourceUsage().maxRSS / 1024 })}\n`);
});
await import('../src/cli.ts');
