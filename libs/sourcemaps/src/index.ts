import { CreateSourceMaps1790000000700 } from './migrations/1790000000700-create-source-maps.migration.js';

export { SourceMapsModule } from './sourcemaps.module.js';
export { SourceMapSymbolicator, type FrameSymbolicator, type GeneratedPosition } from './symbolication/source-map-symbolicator.service.js';
export type { OriginalPosition } from './symbolication/source-map-resolver.js';

/** Migrations of the source-maps context, in order. */
export const SOURCEMAPS_MIGRATIONS = [CreateSourceMaps1790000000700];
