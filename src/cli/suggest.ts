/** The CLI's "did you mean": shared with the testing kit, so it lives in src/shared/. */
export { closeMatch, editDistance, nearest } from '../shared/suggest.js';
