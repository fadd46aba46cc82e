// What other features may use of runs (eslint.config.js: features import each other only here).
export { runsQuery, useRun } from './api/runs';
// The kernel picker with its parameter inputs and the request they build, for the schedules form (issue 28).
export { KernelPicker } from './components/KernelPicker';
export { buildRunRequest, formFromRequest, type FormErrors } from './utils/run-request';
