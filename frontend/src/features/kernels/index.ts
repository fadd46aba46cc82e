// What other features may use of kernels (eslint.config.js: features import each other only here).
export { kernelsOnAll } from './api/group';
export { firstSentence, searchKernels } from './utils/catalog';
