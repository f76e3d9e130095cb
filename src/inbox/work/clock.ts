export { systemClock, type Clock } from '../clock.js';
