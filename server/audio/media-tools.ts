/**
 * ffmpeg and ffprobe, behind one small interface: the only place the
 * server starts them. Debian's ffmpeg is expected on the PATH (FFMPEG_PATH
 * and FFPROBE_PATH override it).
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The input could not be decoded: it is not audio, or it is damaged. Retrying will not help. */
export class UndecodableError extends Error {}

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
  probe(path: string): Promise<ProbeResult>;
  /** Runs ffmpeg; its stdout goes to `onStdout`. Rejects with UndecodableError when ffmpeg fails. */
  ffmpeg(args: string[], onStdout: (chunk: Buffer) => void): Promise<void>;
}

export class SystemMediaTools implements MediaTools {
  constructor(
    private ffmpegPath = process.env.FFMPEG_PATH || 'ffmpeg',
    private ffprobePath = process.env.FFPROBE_PATH || 'ffprobe',
  ) {}

  async unavailable(): Promise<string | undefined> {
    for (const tool of [this.ffmpegPath, this.ffprobePath]) {
      try {
        await run(tool, ['-version']);
      } catch {
        return `${tool} was not found or does not run`;
      }
    }
    return undefined;
  }

  async probe(path: string): Promise<ProbeResult> {
    try {
      const { stdout } = await run(this.ffprobePath, ['-v', 'error', '-show_streams', '-show_format', '-of', 'json', path], { maxBuffer: 16 * 1024 * 1024 });
      return JSON.parse(stdout) as ProbeResult;
    } catch (error) {
      const stderr = (error as { stderr?: string }).stderr?.trim();
      if (stderr !== undefined) throw new UndecodableError(`ffprobe could not read the file: ${lastLine(stderr) || 'unknown format'}`);
      throw error;
    }
  }

  ffmpeg(args: string[], onStdout: (chunk: Buffer) => void): Promise<void> {
    return new Promise((done, fail) => {
      const child = spawn(this.ffmpegPath, ['-v', 'error', '-nostdin', '-y', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stdout.on('data', onStdout);
      child.stderr.on('data', (chunk: Buffer) => {
        if (stderr.length < 64 * 1024) stderr += chunk.toString();
      });
      child.once('error', fail);
      child.once('close', (code, signal) => {
        if (code === 0) done();
        else if (signal) fail(new Error(`ffmpeg was stopped by ${signal}`));
        else fail(new UndecodableError(`ffmpeg could not decode the file: ${lastLine(stderr) || `exit code ${code}`}`));
      });
    });
  }
}

const lastLine = (text: string) => text.trim().split('\n').filter(Boolean).pop() ?? '';
