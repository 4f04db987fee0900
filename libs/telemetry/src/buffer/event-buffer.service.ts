import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy, Optional } from '@nestjs/common';
import {
  type ConsumerMessages,
  type JetStreamClient,
  type JsMsg,
  AckPolicy,
  DeliverPolicy,
  RetentionPolicy,
  StorageType,
  jetstream,
  jetstreamManager,
} from '@nats-io/jetstream';
import { type NatsConnection, connect } from '@nats-io/transport-node';
import { APP_CONFIG, APP_LOGGER, type AppConfig, type AppLogger, Metrics, SchemaGate, type TenantScope } from '#platform';
import { type BatchWriteMeta, EventsRepository } from '../storage/events.repository.js';
import type { EncodedRows } from '../storage/event-insert.sql.js';
import { type BufferedBatch, MalformedBufferedBatch, decodeBufferedBatch, encodeBufferedBatch } from './buffered-batch.codec.js';

/** The durable consumer every replica pulls from (work-queue: each batch goes to one of them). */
export const EVENTS_BUFFER_CONSUMER = 'writer';
/** An append slower than this falls back to the direct write (the request still gets its answer). */
const APPEND_TIMEOUT_MS = 1000;
/**
 * A batch the consumer took and did not acknowledge is handed out again after this: also the
 * bound on how long a batch JetStream delivered to a replica that was stopping stays unseen.
 * A write slower than this is written twice, which the upsert makes harmless.
 */
const ACK_WAIT_MS = 10_000;
/** Batches one replica's consumer holds ahead of its writes. */
const PENDING_LIMIT = 64;
/**
 * Batches one write takes off `pending`; the group commit puts those of one tenant, app and
 * SDK into one statement. One write at a time per replica: what piles up meanwhile goes into
 * the next, and larger statements are what makes the buffered path cheaper. Measured on the
 * bench machine: with two writers, statements held about five batches and the server spent
 * 4.6 - 5.3 ms of CPU per batch; with one, about seven and 3.2 ms (docs/performance.md).
 */
const TAKE_BATCHES = 50;
/** Delay before a batch whose write failed is handed out again (PostgreSQL down, a timeout). */
const RETRY_DELAY_MS = 2000;
/** Delay before batches a stopping replica had taken and not written are handed out again. */
const HAND_BACK_DELAY_MS = 1000;
const RECONNECT_WAIT_MS = 1000;

/** A wait that does not hold the process open (a stopping replica does not wait for it). */
function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/**
 * The optional durable buffer in front of PostgreSQL (EVENTS_BUFFER_URL): POST /v1/events is
 * answered once the batch is appended to a JetStream stream (file storage, work-queue
 * retention), and a consumer on every replica writes the batches with the same statement as
 * the direct path, acknowledging each after its commit. A retry of an event lands on its own
 * row either way (the statement is an upsert by event id).
 *
 * Fails open to the direct path: until the stream is ready, while NATS is unreachable, or
 * when an append fails or times out, `append` returns false and the caller writes to
 * PostgreSQL itself. Should a timed-out append have been stored after all, the consumer's
 * later write is the same upsert again.
 */
@Injectable()
export class EventBuffer implements OnApplicationBootstrap, OnModuleDestroy {
  private connection: NatsConnection | undefined;
  private js: JetStreamClient | undefined;
  private messages: ConsumerMessages | undefined;
  private consuming: Promise<void> | undefined;
  private readonly pending: JsMsg[] = [];
  private readonly signal = new Signal();
  private available = false;
  private stopped = false;
  private readonly subject: string;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly events: EventsRepository,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
    private readonly schema: SchemaGate,
    @Optional() @Inject(Metrics) private readonly metrics?: Metrics | null,
  ) {
    this.subject = `${config.eventsBufferStream}.batches`;
  }

  get enabled(): boolean {
    return this.config.eventsBufferUrl !== undefined;
  }

  /** Whether appends currently go to the stream (false: batches are written directly). */
  get ready(): boolean {
    return this.available && !this.stopped;
  }

  onApplicationBootstrap(): void {
    if (!this.enabled) return;
    // Not awaited: start-up waits neither for NATS nor for the schema; batches go straight to
    // PostgreSQL until both are there (the consumer writes to tables the migrations create).
    void this.schema.whenCurrent().then((current) => (current && !this.stopped ? this.start() : undefined));
  }

  /** Appends an acknowledged batch; false when the caller must write it itself. */
  async append(scope: TenantScope, meta: BatchWriteMeta, rows: EncodedRows): Promise<boolean> {
    const js = this.js;
    if (!js || !this.ready || rows.rowCount === 0) return false;
    try {
      await js.publish(this.subject, encodeBufferedBatch(scope, meta, rows), { timeout: APPEND_TIMEOUT_MS });
      this.metrics?.eventsBuffered.inc({ outcome: 'appended' });
      return true;
    } catch (err) {
      this.logger.warn({ err: { message: (err as Error).message } }, 'events buffer: append failed; writing the batch directly');
      this.metrics?.eventsBuffered.inc({ outcome: 'direct' });
      return false;
    }
  }

  /** Stops taking batches, lets the one being written finish (before the pool closes), closes the connection. */
  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    this.messages?.stop();
    this.signal.notify();
    await this.consuming;
    // drain() fails while NATS is down; close() then stops the reconnect attempts.
    await this.connection?.drain().catch(() => this.connection?.close().catch(() => undefined));
  }

  private async start(): Promise<void> {
    while (!this.stopped) {
      try {
        const connection = await connect({
          servers: this.config.eventsBufferUrl,
          name: `${this.config.serviceName}-events-buffer`,
          maxReconnectAttempts: -1,
          reconnectTimeWait: RECONNECT_WAIT_MS,
          // Otherwise every append builds an Error (with its stack) in advance, in case it
          // times out: 4 % of the buffered server's CPU in a profile. Failures are logged by message.
          noAsyncTraces: true,
        });
        if (this.stopped) {
          await connection.close();
          return;
        }
        this.connection = connection;
        await this.ensureStream(connection);
        this.js = jetstream(connection);
        this.watch(connection);
        this.available = true;
        this.logger.info({ stream: this.config.eventsBufferStream }, 'events buffer: batches are acknowledged after a JetStream append');
        this.consuming = this.consume();
        return;
      } catch (err) {
        this.logger.warn({ err: { message: (err as Error).message } }, 'events buffer: not ready; writing batches directly');
        await this.connection?.close().catch(() => undefined);
        this.connection = undefined;
        await pause(RECONNECT_WAIT_MS);
      }
    }
  }

  private async ensureStream(connection: NatsConnection): Promise<void> {
    const jsm = await jetstreamManager(connection);
    const name = this.config.eventsBufferStream;
    const exists = await jsm.streams.info(name).then(
      () => true,
      () => false,
    );
    if (!exists) {
      await jsm.streams.add({
        name,
        subjects: [this.subject],
        retention: RetentionPolicy.Workqueue,
        storage: StorageType.File,
        num_replicas: this.config.eventsBufferReplicas,
      });
    }
    await jsm.consumers.add(name, {
      durable_name: EVENTS_BUFFER_CONSUMER,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: ACK_WAIT_MS * 1_000_000,
      max_deliver: -1,
    });
  }

  private watch(connection: NatsConnection): void {
    void (async () => {
      for await (const status of connection.status()) {
        if (status.type === 'disconnect') {
          this.available = false;
          this.logger.warn({}, 'events buffer: NATS disconnected; writing batches directly');
        } else if (status.type === 'reconnect') {
          this.available = true;
          this.logger.info({}, 'events buffer: NATS reconnected');
        }
      }
    })();
  }

  /**
   * Takes batches off the stream into `pending` (at most PENDING_LIMIT ahead of the writer);
   * the writer writes what has piled up, merged. A lone batch on an idle replica is written
   * at once; a backlog goes out in large statements.
   */
  private async consume(): Promise<void> {
    const writing = this.writer();
    while (!this.stopped) {
      try {
        const consumer = await this.js!.consumers.get(this.config.eventsBufferStream, EVENTS_BUFFER_CONSUMER);
        this.messages = await consumer.consume({ max_messages: PENDING_LIMIT });
        if (this.stopped) this.messages.stop();
        for await (const message of this.messages) {
          this.pending.push(message);
          this.signal.notify();
          while (this.pending.length >= PENDING_LIMIT && !this.stopped) await this.signal.next();
        }
      } catch (err) {
        if (this.stopped) break;
        this.logger.warn({ err: { message: (err as Error).message } }, 'events buffer: consumer interrupted; resuming');
        await pause(RECONNECT_WAIT_MS);
      }
    }
    this.signal.notify();
    await writing;
    // Taken but not written: handed out again to another replica. Not at once: this one's
    // subscription is still open while its connection drains, and would drop them unseen.
    for (const message of this.pending.splice(0)) message.nak(HAND_BACK_DELAY_MS);
  }

  private async writer(): Promise<void> {
    while (!this.stopped) {
      if (this.pending.length === 0) {
        await this.signal.next();
        continue;
      }
      const taken = this.pending.splice(0, TAKE_BATCHES);
      this.signal.notify();
      await this.write(taken).catch((err: Error) => {
        this.logger.error({ err: { message: err.message } }, 'events buffer: write failed unexpectedly; the batches will be handed out again');
        for (const message of taken) message.nak(RETRY_DELAY_MS);
      });
    }
  }

  /**
   * Writes taken batches, acknowledging each after its commit. They are handed to the group
   * commit together, which writes those of one tenant, app and SDK in one statement (and
   * batch by batch should that statement fail on their rows); a batch whose write failed is
   * handed out again later.
   */
  private async write(messages: JsMsg[]): Promise<void> {
    const writes: Promise<void>[] = [];
    for (const message of messages) {
      let batch: BufferedBatch;
      try {
        batch = decodeBufferedBatch(message.data);
      } catch (err) {
        if (!(err instanceof MalformedBufferedBatch)) throw err;
        this.logger.error({ seq: message.seq, err: { message: err.message } }, 'events buffer: dropping a message that is not a batch');
        message.term(err.message);
        continue;
      }
      writes.push(this.store(batch, message));
    }
    await Promise.all(writes);
  }

  private async store({ scope, meta, rows }: BufferedBatch, message: JsMsg): Promise<void> {
    try {
      await this.events.writeEncoded(scope, meta, rows);
      message.ack();
      this.metrics?.eventsBuffered.inc({ outcome: 'written' });
    } catch (err) {
      this.logger.warn(
        { deliveries: message.info.deliveryCount, err: { message: (err as Error).message } },
        'events buffer: write failed; the batch will be handed out again',
      );
      this.metrics?.eventsBuffered.inc({ outcome: 'retried' });
      message.nak(RETRY_DELAY_MS);
    }
  }
}

/** Wakes every waiter at once (writers on new batches, the reader on room in `pending`). */
class Signal {
  private waiters: (() => void)[] = [];

  next(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}
