export { ReportingModule } from './reporting.module.js';
export { ReportingRead, type ReportingReadOptions } from './reporting-read.decorator.js';
export { ReportingReads, READS_BUCKET, projectOf } from './reporting-reads.service.js';
export {
  COVERAGE_SURFACES,
  type Coverage,
  type CoverageState,
  type CoverageSurface,
  type ReadEnvelope,
  type ReadMeta,
  type SurfaceCoverage,
  CoverageView,
  ReadMetaView,
  SurfaceCoverageView,
} from './read-envelope.js';
