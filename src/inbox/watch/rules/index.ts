import type { ResolvedRules } from '../options.js';
import { backlogRule } from './backlog.js';
import { deadRule } from './dead.js';
import { noWorkerRule } from './no-worker.js';
import { overdueLifecycleRule } from './overdue-lifecycle.js';
import { refusalsRule } from './refusals.js';
import type { Rule } from './rule.js';
import { silenceRule } from './silence.js';

/** The rules turned on, in the order they are evaluated (and their alerts sent). */
export function buildRules(rules: ResolvedRules): Rule[] {
  const built: Rule[] = [];
  if (rules.dead) built.push(deadRule(rules.dead));
  if (rules.backlog) built.push(backlogRule(rules.backlog));
  if (rules.noWorker) built.push(noWorkerRule(rules.noWorker));
  if (rules.refusals) built.push(refusalsRule(rules.refusals));
  if (rules.silence) built.push(silenceRule(rules.silence));
  if (rules.overdueLifecycle) built.push(overdueLifecycleRule(rules.overdueLifecycle));
  return built;
}
