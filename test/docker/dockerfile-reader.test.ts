import { describe, expect, it } from 'vitest';
import { copies, envPairs, healthcheck, parseDockerfile, stage, volumes } from '../../scripts/dockerfile.ts';
import { isIgnored, parseDockerignore } from '../../scripts/dockerignore.ts';

describe('reading a Dockerfile', () => {
  const file = parseDockerfile(`# syntax=docker/dockerfile:1
ARG BASE=node:24-slim
FROM node:24-slim AS build
WORKDIR /src
COPY --chown=node:node a.txt b/ ./out/
RUN echo one \\
    # a comment inside a continued line is dropped
    && echo two

FROM --platform=linux/amd64 node:24-slim
ENV A=1 \\
    B="two words" C=three
ENV OLD style value
COPY --from=build /src/out /app/
VOLUME ["/data", "/cache"]
HEALTHCHECK --interval=10s --timeout=3s CMD ["node", "-e", "1"]
`);

  it('splits stages, names them, and keeps ARG lines before the first FROM apart', () => {
    expect(file.preamble.map((i) => i.keyword)).toEqual(['ARG']);
    expect(file.stages.map((s) => [s.image, s.name])).toEqual([['node:24-slim', 'build'], ['node:24-slim', null]]);
    expect(stage(file, 'build').index).toBe(0);
    expect(stage(file, 'final').index).toBe(1);
    expect(() => stage(file, 'nope')).toThrow(/no stage/);
  });

  it('joins continued lines and drops comments inside them', () => {
    const run = stage(file, 'build').instructions.find((i) => i.keyword === 'RUN');
    expect(run).toMatchObject({ args: 'echo one && echo two', line: 6 });
  });

  it('reads COPY flags, sources and destination', () => {
    expect(copies(stage(file, 'build'))).toEqual([{ from: null, chown: 'node:node', sources: ['a.txt', 'b/'], dest: './out/', line: 5 }]);
    expect(copies(stage(file, 'final'))[0]).toMatchObject({ from: 'build', sources: ['/src/out'], dest: '/app/' });
  });

  it('reads ENV pairs in both forms, quotes removed', () => {
    expect(envPairs(stage(file, 'final'))).toEqual([['A', '1'], ['B', 'two words'], ['C', 'three'], ['OLD', 'style value']]);
  });

  it('reads VOLUME in JSON form and HEALTHCHECK options and command', () => {
    const final = stage(file, 'final');
    expect(volumes(final)).toEqual(['/data', '/cache']);
    expect(healthcheck(final)).toEqual({ options: { interval: '10s', timeout: '3s' }, command: ['node', '-e', '1'], shell: null });
  });

  it('refuses what it would misread: no FROM, heredocs, an unfinished continuation', () => {
    expect(() => parseDockerfile('RUN echo\n')).toThrow(/before the first FROM/);
    expect(() => parseDockerfile('ARG X\n')).toThrow(/no FROM/);
    expect(() => parseDockerfile('FROM a\nRUN <<EOF\necho\nEOF\n')).toThrow(/heredocs/);
    expect(() => parseDockerfile('FROM a\nRUN echo \\\n')).toThrow(/continued line/);
  });
});

describe('reading a .dockerignore the way Docker does', () => {
  const rules = parseDockerignore(`
# comment
/secret.txt
*.log
docs/**/*.md
**/tmp
build/
!build/keep.txt
`);

  it('roots patterns at the context and lets * stay within one folder', () => {
    expect(isIgnored(rules, 'secret.txt')).toBe(true);
    expect(isIgnored(rules, 'sub/secret.txt')).toBe(false);
    expect(isIgnored(rules, 'app.log')).toBe(true);
    expect(isIgnored(rules, 'logs/app.log')).toBe(false);
  });

  it('lets ** span any number of folders, none included', () => {
    expect(isIgnored(rules, 'docs/a.md')).toBe(true);
    expect(isIgnored(rules, 'docs/x/y/a.md')).toBe(true);
    expect(isIgnored(rules, 'tmp/file')).toBe(true);
    expect(isIgnored(rules, 'a/b/tmp/file')).toBe(true);
    expect(isIgnored(rules, 'a/tmpfile')).toBe(false);
  });

  it('excludes a folder with everything in it, and a later ! brings a file back', () => {
    expect(isIgnored(rules, 'build/out.js')).toBe(true);
    expect(isIgnored(rules, 'build/keep.txt')).toBe(false);
  });
});
