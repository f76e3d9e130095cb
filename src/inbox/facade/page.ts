/**
 * The inbox's types that the console's page (src/console/app) shows: the JSON of a delivery and
 * its attempts, the states and the counts. Apart from index.ts because the page runs in a browser
 * and is checked with browser types only (src/console/app/tsconfig.json): nothing reached from
 * here may import Node, and the page imports types only.
 */
export type { AttemptJson, DeliveryJson } from '../json.js';
export type { DeliveryState, InboxStats } from '../types.js';
