import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiQuery, ApiTags } from '@nestjs/swagger';
import { Clock } from '../clock/clock.js';
import { ApiError } from '../errors/api-error.js';
import { ApiErrors } from '../openapi/error-codes.js';
import { Operator } from '../policy/route-policy.js';
import { JOB_QUEUE } from './job-queue.service.js';
import { type JobRow, type JobStatus, JobsRepository } from './jobs.repository.js';

const STATUSES: JobStatus[] = ['queued', 'running', 'done', 'dead'];

export class JobView {
  @ApiProperty({ example: 'job' }) object: 'job';
  @ApiProperty({ example: '42' }) id: string;
  @ApiProperty({ example: 'identity.erase_customer' }) type: string;
  @ApiProperty({ type: String, nullable: true }) projectId: string | null;
  @ApiProperty({ type: String, nullable: true, enum: ['sandbox', 'production'] }) env: string | null;
  @ApiProperty({ enum: STATUSES }) status: JobStatus;
  @ApiProperty({ type: 'integer' }) attempts: number;
  @ApiProperty({ type: 'integer' }) maxAttempts: number;
  @ApiProperty({ type: 'integer', description: 'Unix ms of the next attempt' }) runAtMs: number;
  @ApiProperty({ type: String, nullable: true }) lastError: string | null;
  @ApiProperty({ type: 'integer', description: 'Unix ms' }) updatedAtMs: number;
}

export class JobList {
  @ApiProperty({ example: 'list' }) object: 'list';
  @ApiProperty({ type: [JobView] }) data: JobView[];
}

function view(row: JobRow): JobView {
  return {
    object: 'job',
    id: row.id,
    type: row.type,
    projectId: row.projectId,
    env: row.env,
    status: row.status,
    attempts: row.attempts,
    maxAttempts: row.maxAttempts,
    runAtMs: row.runAtMs,
    lastError: row.lastError,
    updatedAtMs: row.updatedAtMs,
  };
}

/** The operator's view of the durable jobs queue: dead letters first, and a retry. */
@ApiTags('operator')
@Operator()
@Controller('admin/v1/jobs')
export class JobsAdminController {
  constructor(
    private readonly jobs: JobsRepository,
    private readonly clock: Clock,
  ) {}

  @Get()
  @ApiOperation({ operationId: 'adminListJobs', summary: 'List jobs by status (default dead: the dead-letter queue), newest first, at most 500' })
  @ApiQuery({ name: 'status', required: false, enum: STATUSES })
  @ApiOkResponse({ type: JobList })
  @ApiErrors({ 400: ['invalid_param_value'] })
  async list(@Query('status') status?: string): Promise<JobList> {
    const wanted = (status ?? 'dead') as JobStatus;
    if (!STATUSES.includes(wanted)) throw ApiError.invalidParam(`status must be one of ${STATUSES.join(', ')}`);
    return { object: 'list', data: (await this.jobs.list(JOB_QUEUE, wanted, 500)).map(view) };
  }

  @Post(':jobId/retry')
  @HttpCode(200)
  @ApiOperation({ operationId: 'adminRetryJob', summary: 'Put a dead job back in the queue with a fresh budget of attempts' })
  @ApiOkResponse({ type: JobView })
  @ApiErrors({ 400: ['invalid_param_value'] })
  async retry(@Param('jobId') jobId: string): Promise<JobView> {
    const job = await this.jobs.find(JOB_QUEUE, jobId);
    if (!job) throw ApiError.resourceMissing(`No job ${jobId}`);
    const retried = await this.jobs.retryDead(JOB_QUEUE, jobId, this.clock.nowMs());
    if (!retried) throw ApiError.invalidParam(`Job ${jobId} is ${job.status}, not dead`);
    return view(retried);
  }
}
