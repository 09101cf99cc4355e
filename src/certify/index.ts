// Partner certification: checks a partner's sandbox against interface v2 using its registry entry.
export { certifyPartner, exitCodeOf, DEFAULT_TIME_LIMIT_MS, type CertifyReport } from './run.ts';
export type { CertifyOptions, CertifyTarget } from './context.ts';
export { targetFromDefinition, targetFromRegistry } from './target.ts';
export { consoleLines, renderReport, reportFormatOf, summaryLine, type ReportFormat } from './report.ts';
export type { Check, RequirementResult, RequirementVerdict } from './requirement.ts';
