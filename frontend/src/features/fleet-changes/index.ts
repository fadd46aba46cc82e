// What other parts of the explorer may use of fleet changes (eslint.config.js: features import each other only here).
export { FleetChangesList } from './components/FleetChangesList';
export { PeerOutliersList } from './components/PeerOutliersList';
export { decodeFleetView, encodeFleetView, RANGES, type FleetView } from './utils/fleet';
