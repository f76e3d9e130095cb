import type { ResolvedRetention } from '../../retention/options.js';
import type { ResolvedRules } from '../options.js';
import { backlogRule } from './backlog.js';
import { deadRule } from './dead.js';
import { logGapsRule } from './log-gaps.js';
import { noWorkerRule } from './no-worker.js';
import { overdueLifecycleRule } from './overdue-lifecycle.js';
import { refusalsRule } from './refusals.js';
import type { Rule } from './rule.js';
import { silenceRule } from './silence.js';

/** The rules turned on, in the order they are evaluated (and their alerts sent). */
export function buildRules(rules: ResolvedRules, retention?: ResolvedRetention): Rule[] {
  const built: Rule[] = [];
  if (rules.dead) built.push(deadRule(rules.dead));
  if (rules.backlog) built.push(backlogRule(rules.backlog));
  if (rules.noWorker) built.push(noWorkerRule(rules.noWorker));
  if (rules.refusals) built.push(refusalsRule(rules.refusals));
  if (rules.silence) built.push(silenceRule(rules.silence));
  if (rules.overdueLifecycle) built.push(overdueLifecycleRule(rules.overdueLifecycle));
  if (rules.logGaps) built.push(logGapsRule(rules.logGaps, keptMs(retention)));
  return built;
}

/** How long this watcher's retention keeps the deliveries a log-gap partner can be in: the shortest of done, ignored and duplicate. */
function keptMs(retention: ResolvedRetention | undefined): number | undefined {
  const ages = (retention?.ages ?? []).filter(([state]) => state === 'done' || state === 'ignored' || state === 'duplicate');
  return ages.length === 0 ? undefined : Math.min(...ages.map(([, ms]) => ms));
}
