// What other features may use of machines (eslint.config.js: features import each other only here).
export { useRecentRuns } from './api/machine';
