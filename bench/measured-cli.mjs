// `stacker` as a user runs it (`npm start --`, `npx stacker`: bin/stacker.js), in this process,
// printing on exit what the whole process cost (Node's start included): one JSON line on
// stderr, {"wallMs","peakRssMb"}. JavaScript, like bin/stacker.js, so that Node's compile cache
// is on before the first TypeScript file loads, as it is for a user.
process.on('exit', () => {
  process.stderr.write(`\n${JSON.stringify({ wallMs: performance.now(), peakRssMb: process.resourceUsage().maxRSS / 1024 })}\n`);
});
await import('../bin/stacker.js');
