// The version descriptor: everything that differs between Memory V1 and V2, in one value. The
// pipeline (version-pipeline.ts) is written once against this shape, so a second version is a
// second descriptor, not a second copy of the pipeline.
import type { ReadPathTemplates } from "../read/render.js"
import { loadReadPathTemplates } from "../read/render.js"
import { MIGRATIONS, V2_MIGRATIONS, type Migration } from "../store/migrations.js"
import { memoryPaths, type HomeSource, type MemoryPaths, type MemoryVersion } from "../util/paths.js"
import { loadConsolidationTemplates, loadConsolidationV2Templates } from "../write/phase2/consolidate-prompt.js"
import { v1Consolidation, v2Consolidation, type ConsolidationStrategy } from "../write/phase2/consolidation-strategy.js"
import { loadExtractionTemplates } from "../write/phase1/extract.js"
import { loadExtractionV2Templates } from "../write/phase1/extract-v2.js"
import { v1Extraction, v2Extraction, type ExtractionStrategy } from "../write/phase1/extraction-strategy.js"

export const VERSIONS: readonly MemoryVersion[] = Object.freeze(["v1", "v2"])

export interface VersionSpec {
  version: MemoryVersion
  /** Its database, memory folder and summary file under the home. */
  paths: MemoryPaths
  /** Its database's schema; V1 shares memory.db with the catalog. */
  migrations: readonly Migration[]
  /** Whether its database is memory.db itself (the catalog's handle is reused). */
  sharesCatalogDb: boolean
  /** Whether memory_inspect reports readiness (V2: the version experiment's boundary). */
  tracksReadiness: boolean
  readTemplates: ReadPathTemplates
  extraction: ExtractionStrategy
  consolidation: ConsolidationStrategy
}

export function versionSpec(version: MemoryVersion, home: { home: string; source: HomeSource }, templatesDir: string): VersionSpec {
  const paths = memoryPaths(home.home, home.source, version)
  if (version === "v1") {
    return {
      version,
      paths,
      migrations: MIGRATIONS,
      sharesCatalogDb: true,
      tracksReadiness: false,
      readTemplates: loadReadPathTemplates(templatesDir),
      extraction: v1Extraction(loadExtractionTemplates(templatesDir)),
      consolidation: v1Consolidation(loadConsolidationTemplates(templatesDir)),
    }
  }
  return {
    version,
    paths,
    migrations: V2_MIGRATIONS,
    sharesCatalogDb: false,
    tracksReadiness: true,
    readTemplates: loadReadPathTemplates(templatesDir, "v2"),
    extraction: v2Extraction(loadExtractionV2Templates(templatesDir)),
    consolidation: v2Consolidation(loadConsolidationV2Templates(templatesDir)),
  }
}
