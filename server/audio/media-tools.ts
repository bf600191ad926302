/**
 * ffmpeg and ffprobe, behind one small interface: the only place the
 * server starts them. Debian's ffmpeg is expected on the PATH (FFMPEG_PATH
 * and FFPROBE_PATH override it).
 *
 * A failure is one of three kinds, told apart from what the adapter sees
 * (how the process ended, the spawn error, and ffmpeg's own message):
 *   - UndecodableError: the input's fault (not audio, damaged). Retrying
 *     will not help; the file fails for good, with the reason.
 *   - ToolEnvironmentError: the machine's fault (full disk, file size
 *     limit, killed by a signal, a missing or forbidden binary). Retrying
 *     later may work.
 *   - the AbortSignal's reason, when the caller aborted: the process is
 *     killed (SIGKILL) and its outputs are left half-written.
 */
import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';
import { basename } from 'node:path';

/** The input could not be decoded: it is not audio, or it is damaged. Retrying will not help. */
export class UndecodableError extends Error {}

/** ffmpeg or ffprobe failed for a reason of the machine, not of the input; retrying later may work. */
export class ToolEnvironmentError extends Error {}

export interface ProbeStream {
  codec_type: string;
  codec_name: string;
  sample_rate?: string;
  channels?: number;
  sample_fmt?: string;
  bits_per_sample?: number;
  bits_per_raw_sample?: string;
  bit_rate?: string;
  duration?: string;
  tags?: Record<string, string>;
}

export interface ProbeResult {
  streams: ProbeStream[];
  format: { format_name: string; duration?: string; bit_rate?: string; size?: string; tags?: Record<string, string> };
}

export interface MediaTools {
  /** Undefined when ffmpeg and ffprobe run; otherwise why not. */
  unavailable(): Promise<string | undefined>;
  /** ffprobe's view of the file. Rejects with UndecodableError, ToolEnvironmentError or the signal's reason. */
  probe(path: string, signal?: AbortSignal): Promise<ProbeResult>;
  /**
   * Runs ffmpeg; its stdout goes to `onStdout`. Rejects with UndecodableError
   * (the input's fault), ToolEnvironmentError (the machine's), or, once
   * `signal` aborts, with its reason after the process was killed.
   */
  ffmpeg(args: string[], onStdout: (chunk: Buffer) => void, signal?: AbortSignal): Promise<void>;
}

/**
 * ffmpeg runs below the server's CPU priority (nice 10), so that on a busy
 * machine requests are served first and the analysis takes what is left.
 */
export const TOOL_NICENESS = 10;
const STDERR_LIMIT = 64 * 1024;

export class SystemMediaTools implements MediaTools {
  private ffmpegPath: string;
  private ffprobePath: string;

  constructor(
    ffmpegPath = process.env.FFMPEG_PATH || 'ffmpeg',
    ffprobePath = process.env.FFPROBE_PATH || 'ffprobe',
  ) {
    this.ffmpegPath = ffmpegPath;
    this.ffprobePath = ffprobePath;
  }

  async unavailable(): Promise<string | undefined> {
    for (const tool of [this.ffmpegPath, this.ffprobePath]) {
      try {
        await runTool(tool, ['-version'], { inputs: [] });
      } catch (error) {
        return `${tool} was not found or does not run (${(error as Error).message})`;
      }
    }
    return undefined;
  }

  async probe(path: string, signal?: AbortSignal): Promise<ProbeResult> {
    const chunks: Buffer[] = [];
    let size = 0;
    await runTool(this.ffprobePath, ['-v', 'error', '-show_streams', '-show_format', '-of', 'json', path], {
      inputs: [path],
      signal,
      onStdout: (chunk) => {
        size += chunk.length;
        if (size <= 16 * 1024 * 1024) chunks.push(chunk);
      },
    });
    if (size > 16 * 1024 * 1024) throw new UndecodableError('ffprobe described the file in more than 16 MiB; it is not a plain audio file.');
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as ProbeResult;
  }

  ffmpeg(args: string[], onStdout: (chunk: Buffer) => void, signal?: AbortSignal): Promise<void> {
    const inputs = args.flatMap((arg, i) => (args[i - 1] === '-i' ? [arg] : []));
    return runTool(this.ffmpegPath, ['-v', 'error', '-nostdin', '-y', ...args], { inputs, signal, onStdout });
  }
}

/** Runs one of the tools, at a lower CPU priority, and turns how it ended into one of the three outcomes. */
function runTool(tool: string, args: string[], options: { inputs: string[]; signal?: AbortSignal; onStdout?: (chunk: Buffer) => void }): Promise<void> {
  const { signal } = options;
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((done, fail) => {
    // SIGKILL, not SIGTERM: on SIGTERM ffmpeg goes on to finish writing its outputs, which we are about to throw away.
    const child = spawn(tool, args, { stdio: ['ignore', 'pipe', 'pipe'], signal, killSignal: 'SIGKILL' });
    let stderr = '';
    let spawnError: NodeJS.ErrnoException | undefined;
    if (child.pid !== undefined) {
      try {
        setPriority(child.pid, TOOL_NICENESS);
      } catch (error) {
        // ESRCH: it has already exited, which its exit status will tell.
        if ((error as NodeJS.ErrnoException).code !== 'ESRCH') {
          child.kill('SIGKILL');
          spawnError = error as NodeJS.ErrnoException;
        }
      }
    }
    child.stdout.on('data', options.onStdout ?? (() => {}));
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < STDERR_LIMIT) stderr += chunk.toString();
    });
    child.once('error', (error: NodeJS.ErrnoException) => {
      // An abort is reported here as an AbortError; the close event below says the rest.
      if (error.name !== 'AbortError') spawnError ??= error;
    });
    child.once('close', (exitCode, exitSignal) => {
      if (signal?.aborted) fail(signal.reason);
      else if (spawnError) fail(new ToolEnvironmentError(`${tool} could not be run: ${spawnError.code ?? ''} ${spawnError.message}`.trim()));
      else {
        const failure = classifyFailure(tool, { exitCode, exitSignal, stderr, inputs: options.inputs });
        if (failure) fail(failure);
        else done();
      }
    });
  });
}

/**
 * Operating-system errors that ffmpeg reports with their strerror(3) text
 * (glibc's wording, printed by av_err2str(AVERROR(errno))), as in
 * "Error writing trailer of out.m4a: No space left on device". Each is the
 * machine's trouble, not the input's.
 */
const ENVIRONMENT_MESSAGES = [
  'No space left on device', // ENOSPC: the scratch disk is full
  'File too large', // EFBIG: over the file size limit (ulimit -f) with SIGXFSZ ignored
  'Disk quota exceeded', // EDQUOT
  'Read-only file system', // EROFS
  'Input/output error', // EIO: a failing disk
  'Cannot allocate memory', // ENOMEM
  'Too many open files', // EMFILE, ENFILE ("Too many open files in system")
  'Permission denied', // EACCES: the blob or the scratch folder cannot be read or written
  'No such file or directory', // ENOENT: the blob or the scratch folder went away meanwhile
  'Broken pipe', // EPIPE: the reader of the samples went away
  'Resource temporarily unavailable', // EAGAIN
];

/**
 * What ffmpeg 5.1 says about input that is not audio, or is damaged (checked
 * on this machine): a demuxer that finds nothing it knows
 * ("in.wav: Invalid data found when processing input", AVERROR_INVALIDDATA),
 * an MP3 demuxer on garbage ("Failed to read frame size: Could not seek to
 * 1026." then "in.mp3: Invalid argument"), a cut-off MP4 ("moov atom not
 * found"), a stream it cannot read ("Could not find codec parameters"), no
 * audio at all ("Stream map '0:a:0' matches no streams", "Output file #0
 * does not contain any stream").
 */
/** An absolute path in a message, up to the colon ffmpeg puts after it, or a space or quote. */
const ABSOLUTE_PATH = /\/[^\s:'"]+/g;

const INPUT_MESSAGES = [
  /Invalid data found when processing input/i,
  /moov atom not found/i,
  /could not find codec parameters/i,
  /matches no streams/i,
  /does not contain any stream/i,
  /Decoder \(codec [^)]*\) not found/i,
];

/**
 * ffmpeg 5.1 reports a failed write of an output and still exits with 0
 * when the output fails at its end: with a full disk or the file size limit
 * it prints "Error writing trailer of out.m4a: File too large" and "Error
 * closing file out.m4a: File too large", and the outputs are cut off. Such
 * a run has failed, whatever its exit code.
 */
const OUTPUT_FAILURES = [/^Error writing trailer of /, /^Error closing file /, /^av_interleaved_write_frame\(\): /];

/**
 * Tells the input's fault from the machine's, on what the adapter saw;
 * undefined when the run succeeded:
 *   1. Ended by a signal: SIGXFSZ (the file size limit, `ulimit -f`), SIGKILL
 *      (the OOM killer, an operator), SIGTERM…: the machine's.
 *   2. An operating-system error in ffmpeg's message (ENVIRONMENT_MESSAGES),
 *      or an output that could not be written (OUTPUT_FAILURES), even with
 *      exit code 0: the machine's, even if the input is named
 *      ("in.wav: Permission denied"). Other messages with exit code 0 are
 *      damage ffmpeg decoded past: the run succeeded with what the input holds.
 *   3. The input could not be opened for any other reason — ffmpeg prints
 *      "<input>: <reason>" — or a message of INPUT_MESSAGES: the input's.
 *   4. Anything else (exit code 255 without a word is ffmpeg stopped by
 *      SIGTERM or SIGINT): the machine's. Retrying costs little, and a job
 *      that fails on every attempt still fails for good, with this reason.
 */
export function classifyFailure(
  tool: string,
  ended: { exitCode: number | null; exitSignal: NodeJS.Signals | null; stderr: string; inputs: string[] },
): UndecodableError | ToolEnvironmentError | undefined {
  const name = basename(tool);
  // The reason may reach API clients (a file's statusReason): they get no paths of the server's disk, only file names.
  const lines = ended.stderr
    .split('\n')
    .map((line) => line.trim().replace(ABSOLUTE_PATH, (path) => (ended.inputs.some((input) => path.startsWith(input)) ? 'the file' : basename(path))))
    .filter(Boolean);
  const inputs = ['the file'];
  const last = lines.at(-1) ?? '';
  if (ended.exitSignal) {
    const why = ended.exitSignal === 'SIGXFSZ' ? ' (the file size limit was reached)' : '';
    return new ToolEnvironmentError(`${name} was stopped by ${ended.exitSignal}${why}${last ? `: ${last}` : ''}`);
  }
  const environment = lines.find((line) => ENVIRONMENT_MESSAGES.some((message) => line.includes(message)));
  if (environment) return new ToolEnvironmentError(`${name} failed: ${environment}`);
  const unwritten = lines.find((line) => OUTPUT_FAILURES.some((pattern) => pattern.test(line)));
  if (unwritten) return new ToolEnvironmentError(`${name} could not write its output: ${unwritten}`);
  if (ended.exitCode === 0) return undefined;
  const unopened = lines.find((line) => line.startsWith('the file: '));
  const input = unopened ?? lines.find((line) => INPUT_MESSAGES.some((pattern) => pattern.test(line)));
  if (input) return new UndecodableError(`${name} could not decode the file: ${describeInputError(input, inputs, lines)}`);
  return new ToolEnvironmentError(`${name} failed with exit code ${ended.exitCode}${last ? `: ${last}` : ' and no message'}`);
}

/** The message without the scratch path of the input, and with the demuxer's detail when the last word is a bare "Invalid argument". */
function describeInputError(line: string, inputs: string[], lines: string[]): string {
  let message = line;
  for (const input of inputs) if (message.startsWith(`${input}: `)) message = message.slice(input.length + 2);
  if (message === 'Invalid argument') {
    const detail = lines.find((candidate) => candidate.startsWith('['))?.replace(/^\[[^\]]*\]\s*/, '');
    if (detail) message = `${detail} (${message})`;
  }
  return message;
}
