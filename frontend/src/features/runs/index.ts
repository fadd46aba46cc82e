// What other features may use of runs (eslint.config.js: features import each other only here).
export { runsQuery, useRun } from './api/runs';
