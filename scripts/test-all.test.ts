import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { boxedBannerFilter, chooseSteps, runSteps, type Step, steps } from './test-all.ts';

const root = resolve(import.meta.dirname, '..');

function capture(): { stream: PassThrough; text(): string } {
  const stream = new PassThrough();
  let text = '';
  stream.setEncoding('utf8').on('data', (chunk: string) => {
    text += chunk;
  });
  return { stream, text: () => text };
}

const node = (code: string) => `node -e ${JSON.stringify(code)}`;

describe('npm test runner (scripts/test-all.ts)', () => {
  it('runs every step even after one fails, streams each one, and reports them all in one table', async () => {
    const out = capture();
    const err = capture();
    const fake: Step[] = [
      { name: 'first', title: 'passes', command: node('console.log("output of first")') },
      { name: 'second', title: 'fails', command: node('console.error("complaint of second"); process.exit(3)') },
      { name: 'third', title: 'still runs', command: node('console.log("output of third")') },
    ];
    const { ok, results } = await runSteps(fake, { out: out.stream, err: err.stream });

    expect(ok).toBe(false);
    expect(results.map((result) => [result.step.name, result.ok, result.exit])).toEqual([
      ['first', true, 0],
      ['second', false, 3],
      ['third', true, 0],
    ]);
    expect(out.text()).toContain('output of first');
    expect(out.text()).toContain('output of third');
    expect(err.text()).toContain('complaint of second');
    const table = out.text().slice(out.text().lastIndexOf('step  '));
    expect(table).toMatch(/^first +passed +\d+\.\d s +passes$/m);
    expect(table).toMatch(/^second +FAILED \(3\) +\d+\.\d s +fails$/m);
    expect(table).toMatch(/^third +passed +\d+\.\d s +still runs$/m);
    expect(table).toContain('1 of 3 steps failed: second.');
  });

  it("repeats each failing test and its error under the table, however far above the step printed them", async () => {
    const out = capture();
    // As vitest prints its failures: on stderr, coloured, the error on the line after the heading.
    const failing = [
      'console.log("✓ a passing test")',
      'console.error("\\n\\x1b[31m⎯⎯⎯ Failed Tests 2 ⎯⎯⎯\\x1b[39m\\n")',
      'console.error("\\x1b[41m\\x1b[1m FAIL \\x1b[22m\\x1b[49m  server  a.test.ts > suite > first")',
      'console.error("AssertionError: expected 1 to be 2")',
      'console.error("   at a.test.ts:3:7")',
      'console.error(" FAIL   server  b.test.ts > second\\n\\nError: Test timed out in 30000ms.")',
      'console.log(Array.from({ length: 500 }, (_, i) => "filler " + i).join("\\n"))',
      'process.exit(1)',
    ].join(';');
    const { results } = await runSteps([{ name: 'server', title: 'fails twice', command: node(failing) }], {
      out: out.stream,
      err: capture().stream,
    });
    expect(results[0].failures).toEqual([
      'FAIL   server  a.test.ts > suite > first\n    AssertionError: expected 1 to be 2',
      'FAIL   server  b.test.ts > second\n    Error: Test timed out in 30000ms.',
    ]);
    const tail = out.text().slice(out.text().lastIndexOf('filler 499'));
    expect(tail).toContain('What failed, again');
    expect(tail).toContain('server:\n  FAIL   server  a.test.ts > suite > first\n    AssertionError: expected 1 to be 2\n');
    expect(tail.indexOf('b.test.ts > second')).toBeLessThan(tail.indexOf('step  '));
  });

  it('keeps at most 20 failures of a step, and says how many more there were', async () => {
    const many = `for (let i = 0; i < 23; i++) console.error(" FAIL  t" + i + "\\nError " + i); process.exit(1)`;
    const { results } = await runSteps([{ name: 'many', title: 'fails often', command: node(many) }], {
      out: capture().stream,
      err: capture().stream,
    });
    expect(results[0].failures).toHaveLength(21);
    expect(results[0].failures[19]).toBe('FAIL  t19\n    Error 19');
    expect(results[0].failures[20]).toBe("… and 3 more, in the step's output above");
  });

  it('passes when every step passes', async () => {
    const out = capture();
    const { ok } = await runSteps([{ name: 'only', title: 'passes', command: node('') }], { out: out.stream, err: capture().stream });
    expect(ok).toBe(true);
    expect(out.text()).toContain('All 1 steps passed');
  });

  it("drops Redocly's boxed banners, and keeps every other line", () => {
    let kept = '';
    const filter = boxedBannerFilter((text) => {
      kept += text;
    });
    const banner = ['', '    ╔════════╗', '    ║  Node.js 20 support is ending  ║', '    ╚════════╝', '', ''].join('\n');
    // Split mid-line, as a pipe delivers it.
    const text = `${banner}validating openapi/openapi.yaml...\n${banner}Woohoo! Your API description is valid.`;
    filter.push(text.slice(0, 37));
    filter.push(text.slice(37));
    filter.end();
    expect(kept).toBe('validating openapi/openapi.yaml...\nWoohoo! Your API description is valid.\n');
  });

  it('runs only the steps named, and names the known ones when one is unknown', () => {
    expect(chooseSteps(['lint', 'typecheck']).map((step) => step.name)).toEqual(['typecheck', 'lint']);
    expect(() => chooseSteps(['lnt'])).toThrow(/Unknown step lnt\. The steps are: spec, generated, breaking, typecheck, lint, layers, bench-readme, server/);
  });

  it('is what npm test runs, and each of its steps is a script of package.json', () => {
    const { scripts } = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(scripts.test).toBe('node scripts/test-all.ts');
    for (const step of steps) {
      const script = /^npm run --silent (\S+)$/.exec(step.command)?.[1];
      expect(script && scripts[script], `${step.name}: ${step.command}`).toBeTruthy();
    }
    // Every suite the README promises: the server's tests and the contract suite on each target.
    expect(steps.map((step) => step.name)).toEqual(['spec', 'generated', 'breaking', 'typecheck', 'lint', 'layers', 'bench-readme', 'server', 'contract:mock', 'contract:sqlite', 'contract:postgres', 'contract:sandbox']);
  });
});
