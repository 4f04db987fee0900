import { existsSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { Worker } from 'node:worker_threads';
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, APP_LOGGER, type AppConfig, type AppLogger } from '#platform';
import { type DecodedUpload, decodeUpload } from './sourcemap-decode.js';

const WORKER_FILE = ['libs', 'sourcemaps', 'src', 'upload', 'sourcemap-decode.worker'];

/**
 * Loads the worker from TypeScript sources (tests run the service from them): compiles `.ts`
 * files with @swc/core, which the test runner already uses, and resolves `./x.js` to `./x.ts`.
 */
const TS_BOOTSTRAP = `
const Module = require('node:module');
const fs = require('node:fs');
const path = require('node:path');
const { transformSync } = require('@swc/core');
const original = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  if (parent && parent.filename && request.startsWith('.') && request.endsWith('.js')) {
    const candidate = path.resolve(path.dirname(parent.filename), request.slice(0, -3) + '.ts');
    if (fs.existsSync(candidate)) return candidate;
  }
  return original.call(this, request, parent, ...rest);
};
Module._extensions['.ts'] = function (module, filename) {
  const { code } = transformSync(fs.readFileSync(filename, 'utf8'), {
    filename,
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'commonjs' },
  });
  module._compile(code, filename);
};
require(require('node:worker_threads').workerData.script);
`;

/** The worker script: next to the built service (dist), else the TypeScript source; null when neither is found. */
function workerScript(): { script: string; typescript: boolean } | null {
  const entry = process.argv[1] ?? '';
  const distAt = entry.lastIndexOf(`${sep}dist${sep}`);
  if (distAt !== -1) {
    const built = join(entry.slice(0, distAt + 5), ...WORKER_FILE) + '.js';
    if (existsSync(built)) return { script: built, typescript: false };
  }
  const source = resolve(process.cwd(), ...WORKER_FILE) + '.ts';
  if (existsSync(source) && existsSync(resolve(process.cwd(), 'node_modules', '@swc', 'core'))) return { script: source, typescript: true };
  return null;
}

interface Job {
  id: number;
  body: Uint8Array;
  maxFiles: number;
  resolve: (result: DecodedUpload) => void;
  reject: (err: Error) => void;
}

/**
 * A small pool of worker threads (SOURCEMAP_DECODE_WORKERS, default 1) that decode source-map
 * uploads (sourcemap-decode.ts) off the event loop, one upload per worker at a time, in
 * arrival order. Without a worker script (an unusual layout) it decodes in the process.
 */
@Injectable()
export class DecodePool implements OnModuleDestroy {
  private readonly idle: Worker[] = [];
  private readonly workers: Worker[] = [];
  private readonly queue: Job[] = [];
  private readonly running = new Map<Worker, Job>();
  private nextId = 0;
  private readonly location: { script: string; typescript: boolean } | null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {
    this.location = workerScript();
    if (!this.location) this.logger.warn({}, 'source-map decode worker not found: uploads are decoded on the event loop');
  }

  decode(body: Buffer, maxFiles: number): Promise<DecodedUpload> {
    if (!this.location) return Promise.resolve(decodeUpload(body, maxFiles));
    // The worker gets the bytes without a copy when the buffer owns its memory.
    const owned = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength ? new Uint8Array(body.buffer) : new Uint8Array(body);
    return new Promise((resolve, reject) => {
      this.queue.push({ id: ++this.nextId, body: owned, maxFiles, resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const worker = this.idle.pop() ?? this.spawn();
      if (!worker) return;
      const job = this.queue.shift()!;
      this.running.set(worker, job);
      worker.postMessage({ id: job.id, body: job.body, maxFiles: job.maxFiles }, [job.body.buffer as ArrayBuffer]);
    }
  }

  private spawn(): Worker | null {
    if (this.workers.length >= this.config.sourcemapDecodeWorkers) return null;
    const { script, typescript } = this.location!;
    const worker = typescript ? new Worker(TS_BOOTSTRAP, { eval: true, workerData: { script } }) : new Worker(script);
    worker.unref();
    worker.on('message', (message: { id: number; result?: DecodedUpload; error?: string }) => {
      const job = this.running.get(worker);
      this.running.delete(worker);
      this.idle.push(worker);
      if (job) {
        if (message.result) job.resolve(message.result);
        else job.reject(new Error(`source-map decode failed: ${message.error}`));
      }
      this.dispatch();
    });
    // A result the main thread cannot deserialise must fail its job, not leave it waiting forever.
    worker.on('messageerror', (err) => {
      const job = this.running.get(worker);
      this.running.delete(worker);
      this.idle.push(worker);
      job?.reject(new Error(`source-map decode result could not be received: ${err.message}`));
      this.dispatch();
    });
    worker.on('error', (err) => this.lose(worker, err));
    worker.on('exit', (code) => this.lose(worker, new Error(`source-map decode worker exited with code ${code}`)));
    this.workers.push(worker);
    return worker;
  }

  /** A worker that died fails its job; a new one is started for the queue. */
  private lose(worker: Worker, err: Error): void {
    const at = this.workers.indexOf(worker);
    if (at === -1) return;
    this.workers.splice(at, 1);
    const idleAt = this.idle.indexOf(worker);
    if (idleAt !== -1) this.idle.splice(idleAt, 1);
    const job = this.running.get(worker);
    this.running.delete(worker);
    if (job) {
      this.logger.error({ err: { message: err.message } }, 'source-map decode worker failed');
      job.reject(err);
    }
    this.dispatch();
  }

  async onModuleDestroy(): Promise<void> {
    const workers = [...this.workers];
    this.workers.length = 0;
    await Promise.all(workers.map((worker) => worker.terminate()));
  }
}
