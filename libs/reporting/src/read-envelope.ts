import { ApiProperty } from '@nestjs/swagger';

/** Coverage states of a surface (docs/api.md, "Read API"): `not_instrumented` figures are null, never 0. */
export type CoverageState = 'measured' | 'not_instrumented';
export const COVERAGE_SURFACES = ['revenue', 'errors', 'analytics', 'readCost', 'userCensus'] as const;
export type CoverageSurface = (typeof COVERAGE_SURFACES)[number];

export interface SurfaceCoverage {
  state: CoverageState;
  /** Unix ms since when the surface is measured; null when unknown or not instrumented. */
  since: number | null;
}

export type Coverage = Partial<Record<CoverageSurface, SurfaceCoverage>>;

/** One surface's coverage, `not_instrumented` when the surface was not read. */
export function surfaceCoverage(coverage: SurfaceCoverage | undefined): SurfaceCoverage {
  return coverage ? { state: coverage.state, since: coverage.since } : { state: 'not_instrumented', since: null };
}

export interface ReadMeta {
  /** The project read (`proj_…`); null for a read over a whole workspace. */
  project: string | null;
  env: string;
  generatedAt: number;
  coverage: Coverage;
}

/** Every read answer: `{ object, data, meta }`. */
export interface ReadEnvelope<T> {
  object: string;
  data: T;
  meta: ReadMeta;
}

export class SurfaceCoverageView {
  @ApiProperty({ enum: ['measured', 'not_instrumented'] }) state: CoverageState;
  @ApiProperty({ type: Number, nullable: true, description: 'Unix ms' }) since: number | null;
}

export class CoverageView {
  @ApiProperty({ type: SurfaceCoverageView, required: false }) revenue?: SurfaceCoverageView;
  @ApiProperty({ type: SurfaceCoverageView, required: false }) errors?: SurfaceCoverageView;
  @ApiProperty({ type: SurfaceCoverageView, required: false }) analytics?: SurfaceCoverageView;
  @ApiProperty({ type: SurfaceCoverageView, required: false }) readCost?: SurfaceCoverageView;
  @ApiProperty({ type: SurfaceCoverageView, required: false }) userCensus?: SurfaceCoverageView;
}

export class ReadMetaView {
  @ApiProperty({ type: String, nullable: true, example: 'proj_8fJ2kQ…', description: 'null for a read over a whole workspace' }) project: string | null;
  @ApiProperty({ enum: ['sandbox', 'production'] }) env: string;
  @ApiProperty({ description: 'Unix ms' }) generatedAt: number;
  @ApiProperty({ type: CoverageView }) coverage: CoverageView;
}
