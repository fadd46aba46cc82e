// What other parts of the explorer may use of alerts (eslint.config.js: features import each other only here).
export { AlertBadge } from './components/AlertBadge';
