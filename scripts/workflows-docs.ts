/**
 * The docs' "Runnable workflows" section: the partner journeys of
 * openapi/workflows/ (Arazzo 1.0 files, which `redocly respect` runs), each
 * with its inputs, its steps and the command that runs it. It is made from
 * the files when the spec is bundled (scripts/bundle.ts), and added to the
 * end of the bundle's introduction, which the docs page shows as a section
 * of its own; so the docs list the workflows as they are, never as they
 * were, and `npm run check:generated` fails when they fall behind.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Where the workflows live, from the repository's root. */
export const WORKFLOWS_DIR = 'openapi/workflows';
/** The server the run commands name: a server started with `npm start`, as the spec's first server (the served docs name their own server instead). */
export const RUN_SERVER_URL = 'http://localhost:8080/api/v1';
/** The heading of the section; the docs page links it as `#/section/runnable-workflows`. */
export const SECTION_HEADING = '## Runnable workflows';

type Json = Record<string, unknown>;

interface InputSchema {
  type?: string;
  required?: string[];
  properties?: Record<string, { type?: string; description?: string; default?: unknown; format?: string }>;
}

interface Criterion {
  condition: string;
  type?: string;
}

interface Action {
  name: string;
  type: 'end' | 'goto' | 'retry';
  retryAfter?: number;
  retryLimit?: number;
  criteria?: Criterion[];
}

interface Step {
  stepId: string;
  description?: string;
  operationId?: string;
  'x-operation'?: { url: string; method: string };
  successCriteria?: Criterion[];
  onFailure?: Action[];
}

interface Workflow {
  workflowId: string;
  summary?: string;
  description?: string;
  inputs?: InputSchema;
  steps: Step[];
}

/** One Arazzo document, as JSON, with the path it was read from (relative to the repository's root). */
export interface ArazzoFile {
  path: string;
  document: { arazzo: string; info: { title: string; summary?: string }; workflows: Workflow[] };
}

/** The Arazzo files of the workflows folder, in name order (`*.arazzo.yaml`). */
export function workflowFiles(root: string): string[] {
  return readdirSync(join(root, WORKFLOWS_DIR))
    .filter((name) => name.endsWith('.arazzo.yaml'))
    .sort()
    .map((name) => `${WORKFLOWS_DIR}/${name}`);
}

/** What a step's operation is, for a link to it: its summary, method, path, and where the docs page puts it. */
interface OperationEntry {
  summary: string;
  method: string;
  path: string;
  anchor: string;
}

/**
 * Every operation of the bundled spec by operationId, with the anchor the
 * docs page (Redoc) gives it: `#/<first tag, lower case, spaces as
 * hyphens>/<operationId, lower case>`, such as `#/files/requestuploadurl`.
 * web/docs-page.test.ts follows one of these links in Chromium.
 */
export function operationsOf(spec: Json): Map<string, OperationEntry> {
  const operations = new Map<string, OperationEntry>();
  for (const [path, item] of Object.entries(spec.paths as Record<string, Record<string, Json>>)) {
    for (const method of ['get', 'post', 'put', 'delete', 'patch'] as const) {
      const operation = item[method];
      if (!operation) continue;
      const tag = ((operation.tags as string[] | undefined)?.[0] ?? '').toLowerCase().replace(/\s+/g, '-');
      const operationId = operation.operationId as string;
      operations.set(operationId, { summary: operation.summary as string, method: method.toUpperCase(), path, anchor: `#/${tag}/${operationId.toLowerCase()}` });
    }
  }
  return operations;
}

/** Text on one line, as a list item needs it. */
const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();
const code = (text: string) => `\`${text}\``;

function inputsLine(inputs: InputSchema | undefined): string {
  const required = new Set(inputs?.required ?? []);
  const items = Object.entries(inputs?.properties ?? {}).map(([name, input]) => {
    const parts = [`${code(name)}${required.has(name) ? ' (required)' : ''}`];
    if (input.description) parts.push(`: ${oneLine(input.description)}`);
    if (input.default !== undefined) parts.push(` Default: ${code(String(input.default))}`);
    return `- ${parts.join('')}`;
  });
  return items.length > 0 ? `Inputs:\n\n${items.join('\n')}` : 'Inputs: none.';
}

function stepLine(step: Step, index: number, operations: Map<string, OperationEntry>, file: string): string {
  let call: string;
  if (step.operationId) {
    const operation = operations.get(step.operationId);
    if (!operation) throw new Error(`${file}: step ${step.stepId} calls ${step.operationId}, which the spec does not have.`);
    call = `[${operation.summary}](${operation.anchor}) (${code(`${operation.method} ${operation.path}`)})`;
  } else if (step['x-operation']) {
    // A URL the API handed out (a signed upload URL), called as it is.
    call = `${code(step['x-operation'].method.toUpperCase())} to the URL ${code(step['x-operation'].url)}`;
  } else {
    throw new Error(`${file}: step ${step.stepId} has neither an operationId nor an x-operation; the docs cannot say what it calls.`);
  }
  const lines = [`${index + 1}. **${step.stepId}**: ${call}. ${oneLine(step.description ?? '')}`.trimEnd()];
  const criteria = (step.successCriteria ?? []).map((criterion) => code(criterion.condition));
  if (criteria.length > 0) lines.push(`   - Succeeds when ${criteria.join(' and ')}.`);
  for (const action of step.onFailure ?? []) {
    const when = (action.criteria ?? []).map((criterion) => code(criterion.condition)).join(' and ');
    if (action.type === 'retry') lines.push(`   - Otherwise asked again${when ? ` when ${when}` : ''}, every ${action.retryAfter ?? 0} s, at most ${action.retryLimit ?? 0} times.`);
    else if (action.type === 'end') lines.push(`   - Ends the workflow, failed, when ${when || 'it fails'}.`);
    else lines.push(`   - On failure${when ? ` when ${when}` : ''}: goes on as ${code(action.name)} says.`);
  }
  return lines.join('\n');
}

/** The command that runs a workflow's file, with a placeholder for every required input. */
export function runCommand(file: ArazzoFile): string {
  const required = new Set(file.document.workflows.flatMap((workflow) => workflow.inputs?.required ?? []));
  const placeholders: Record<string, string> = { token: '$TOKEN' };
  const inputs = [...required].map((name) => `--input ${name}=${placeholders[name] ?? `<${name}>`}`);
  return [`npx redocly respect ${file.path}`, ...inputs, `--server api=${RUN_SERVER_URL}`].join(' \\\n  ');
}

/** The section, in Markdown, for these files and the operations of the bundled spec. */
export function workflowsSection(files: ArazzoFile[], operations: Map<string, OperationEntry>): string {
  const parts = [
    SECTION_HEADING,
    oneLine(`Partner journeys, written as [Arazzo 1.0](https://spec.openapis.org/arazzo/v1.0.1.html) workflows in
      ${code(WORKFLOWS_DIR + '/')} of the repository. Redocly CLI runs them (${code('redocly respect')}), checking
      every answer against this document. Each takes the bearer token as its input ${code('token')}; against the
      sandbox (${code('npm run sandbox')}) any token will do. ${code('npm test')} runs them against the sandbox and
      against a server on SQLite and on PostgreSQL.`),
  ];
  for (const file of files) {
    for (const workflow of file.document.workflows) {
      parts.push(
        `### ${workflow.summary ?? file.document.info.title}`,
        oneLine(workflow.description ?? file.document.info.summary ?? ''),
        `File: ${code(file.path)}, workflow ${code(workflow.workflowId)}.`,
        inputsLine(workflow.inputs),
        `Steps:\n\n${workflow.steps.map((step, index) => stepLine(step, index, operations, file.path)).join('\n')}`,
      );
    }
    parts.push(`Run it:\n\n\`\`\`sh\n${runCommand(file)}\n\`\`\``);
  }
  return parts.filter((part) => part !== '').join('\n\n');
}

/** Adds the section to the end of the bundled spec's introduction. */
export function addWorkflowsSection(spec: Json, files: ArazzoFile[]): void {
  const info = spec.info as { description?: string };
  info.description = `${(info.description ?? '').trimEnd()}\n\n${workflowsSection(files, operationsOf(spec))}\n`;
}
