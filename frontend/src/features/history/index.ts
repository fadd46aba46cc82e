// What other features may use of history (eslint.config.js: features import each other only here).
export { historyPath } from './utils/history';
