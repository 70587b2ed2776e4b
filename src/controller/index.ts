/** The controller: wires the stages together around two reflectors and the scheduler. */
export { Controller } from './controller.ts';
export type { ControllerOptions, LocalCounts } from './controller.ts';
export type { ControllerEvent, Observer, PolicyRef, RemediationResult } from './events.ts';
export type { Probers } from './runner.ts';
export { reporter } from './report.ts';
export { gateConditionFor } from './conditions.ts';
