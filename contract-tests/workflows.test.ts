/**
 * The partner journeys of openapi/workflows/ (Arazzo 1.0), run by Redocly's
 * `respect` exactly as the docs tell partners to, against the real server on
 * SQLite and on PostgreSQL and against the sandbox. Respect checks each
 * answer against the spec and the workflow's own success criteria; after it,
 * each test reads through the API what a partner would then rely on.
 *
 * They run on an account of their own (`workflowsToken`), so that what they
 * make (projects, a webhook on `project.created`) reaches no other test. The
 * mock keeps no state, so a workflow's reads would not see its writes
 * there: skipped on the mock.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { baseUrl, client, onMock, target } from './support/context.ts';
import { answerOf, respect, type RespectRun, stepIds } from './support/respect.ts';
import { startReceiver, type Receiver } from '../server/testing/webhook-receiver.ts';

const token = inject('workflowsToken');
const api = client(token);
const tone = readFileSync(resolve(import.meta.dirname, '../openapi/workflows/tone.wav'));

/** A run that passed, or a failure that shows what Respect printed. */
function expectPassed(run: RespectRun) {
  expect(run.exitCode, run.output).toBe(0);
  expect(run.status, run.output).toBe('success');
}

// Respect's own limit on a run is 170 s (support/respect.ts): audio may wait behind the other tests' in the job queue.
const RUN_TIMEOUT_MS = 180_000;

describe.skipIf(onMock)('runnable workflows (openapi/workflows/, run by redocly respect)', () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
    // A sandbox makes a token's account, with its demo analysed, on the token's first request, one account at a time:
    // made here, so that no workflow's first call waits on it (Respect gives up on a call after 40 s).
    expect((await api.GET('/me')).response.status).toBe(200);
  });
  afterAll(() => receiver?.close());

  it('upload-and-share: a project, the upload URL, the PUT with the headers it named, polled until ready, and a player onto the stack', { timeout: RUN_TIMEOUT_MS }, async () => {
    const run = await respect('openapi/workflows/upload-and-share.arazzo.yaml', { token }, baseUrl);
    expectPassed(run);
    expect(stepIds(run)).toEqual(['createProject', 'requestUploadUrl', 'uploadFile', 'waitUntilReady', 'createPlayer']);

    const upload = answerOf<{ boxid: string; stackid: string }>(run, 'requestUploadUrl');
    const projectid = answerOf<{ id: string }>(run, 'createProject').id;
    const { data: file } = await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: upload.boxid } } });
    expect(file).toMatchObject({ status: 'ready', size: tone.length, duration: 1, mimeType: 'audio/wav' });
    const playerid = answerOf<{ id: string }>(run, 'createPlayer').id;
    const { data: player } = await api.GET('/players/{playerid}', { params: { path: { playerid } } });
    expect(player).toMatchObject({ projectid, boxids: [upload.stackid] });
    expect(player!.playerUrl).toMatch(/\/p\/ply_/);
  });

  it('collect-feedback: the newest open comment answered in its thread and marked done; a comment already done is left alone', { timeout: RUN_TIMEOUT_MS }, async () => {
    const { data: project } = await api.POST('/projects', { body: { name: 'Arazzo: feedback' } });
    const projectid = project!.id;
    const { data: uploaded } = await api.uploadFile(projectid, { name: 'tone.wav', mimeType: 'audio/wav' }, tone);
    const fileid = uploaded!.box.id;
    const comments = { params: { path: { projectid, fileid } } };
    const { data: open } = await api.POST('/projects/{projectid}/files/{fileid}/comments', { ...comments, body: { message: 'The tone is a little loud.', audioTimestamp: 0.5 } });
    const { data: done } = await api.POST('/projects/{projectid}/files/{fileid}/comments', { ...comments, body: { message: 'Already dealt with.', completed: true } });

    const run = await respect('openapi/workflows/collect-feedback.arazzo.yaml', { token, projectid, reply: 'Turned down 3 dB.' }, baseUrl);
    expectPassed(run);
    expect(stepIds(run)).toEqual(['listOpenComments', 'reply', 'markDone']);

    const { data: after } = await api.GET('/projects/{projectid}/files/{fileid}/comments', comments);
    expect(after!.find((comment) => comment.id === open!.id)).toMatchObject({ completed: true });
    const replies = after!.filter((comment) => comment.isReply);
    expect(replies).toEqual([expect.objectContaining({ parentid: open!.id, message: 'Turned down 3 dB.', completed: true })]);
    expect(after!.find((comment) => comment.id === done!.id)).toMatchObject({ completed: true, message: 'Already dealt with.' });
    // Nothing is left open: the workflow's own reply was made done, so a second run would find the next comment.
    const { data: stillOpen } = await api.GET('/projects/{projectid}/comments', { params: { path: { projectid }, query: { status: 'open' } } });
    expect(stillOpen).toEqual([]);
  });

  it.runIf(target === 'sandbox')("collect-feedback on the sandbox's demo project, whose open comment the docs promise a partner", { timeout: RUN_TIMEOUT_MS }, async () => {
    const { data: projects } = await api.GET('/projects');
    const demo = projects!.find((project) => project.name.startsWith('Demo'))!;
    const run = await respect('openapi/workflows/collect-feedback.arazzo.yaml', { token, projectid: demo.id }, baseUrl);
    expectPassed(run);
    expect(answerOf<Array<{ message: string }>>(run, 'listOpenComments')[0].message).toBe('The kick sits much better in this one.');
  });

  it('collect-feedback fails at its first step on a project with no open comment, and goes no further', { timeout: RUN_TIMEOUT_MS }, async () => {
    const { data: project } = await api.POST('/projects', { body: { name: 'Arazzo: no feedback yet' } });
    const run = await respect('openapi/workflows/collect-feedback.arazzo.yaml', { token, projectid: project!.id }, baseUrl);
    expect(run.exitCode, run.output).toBe(1);
    expect(stepIds(run)).toEqual(['listOpenComments']);
    expect(run.steps[0].checks.filter((check) => !check.passed).map((check) => check.name)).toContain('success criteria check');
  });

  it('webhooks-redeliver: the endpoint gets project.created, then the same delivery again (same webhook-id), and the subscription is gone', { timeout: RUN_TIMEOUT_MS }, async () => {
    const before = receiver.received.length;
    const run = await respect('openapi/workflows/webhooks-redeliver.arazzo.yaml', { token, url: receiver.url }, baseUrl);
    expectPassed(run);
    expect(stepIds(run)).toEqual(['subscribe', 'causeEvent', 'waitForDelivery', 'redeliver', 'waitForRedelivery', 'unsubscribe']);

    // The log says the second attempt succeeded, so both requests have arrived.
    const received = receiver.received.slice(before);
    const deliveryid = answerOf<{ id: string }>(run, 'redeliver').id;
    expect(received.map((request) => request.headers['webhook-id'])).toEqual([deliveryid, deliveryid]);
    expect(received.map((request) => (JSON.parse(request.body) as { type: string }).type)).toEqual(['project.created', 'project.created']);
    expect(received[1].body).toBe(received[0].body);
    const webhookid = answerOf<{ id: string }>(run, 'subscribe').id;
    const { data: webhooks } = await api.GET('/webhooks');
    expect(webhooks!.map((webhook) => webhook.id)).not.toContain(webhookid);
  });
});
