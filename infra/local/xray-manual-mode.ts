/**
 * The Lambda entries import Powertools' Tracer, and the X-Ray SDK under it installs a process-wide async hook as it
 * is loaded (to carry trace context from promise to promise) unless it is told to run in manual mode. The embedded
 * stack has no X-Ray and calls the bare `createHandler(deps)` handlers, never the traced exports, yet that hook would
 * cost every promise of the process an init and a destroy callback. Import this before any entry module.
 */
process.env.AWS_XRAY_MANUAL_MODE ??= 'true';
