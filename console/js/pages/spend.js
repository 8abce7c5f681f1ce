/**
 * What a run (or a step) has spent against its budget, as one short line: `120 / 100 tokens · $0.50 / $1.00`.
 * Over a limit is marked, so a run that ended `budget_exhausted` shows which limit it hit.
 */
const money = (n) => `$${n < 0.01 && n > 0 ? n.toPrecision(2) : n.toFixed(2)}`;

function part(spent, limit, show) {
  if (limit === undefined) return { text: show(spent), over: false };
  return { text: `${show(spent)} / ${show(limit)}`, over: spent >= limit };
}

const withUnit = (p, unit) => ({ ...p, text: `${p.text} ${unit}` });

/** The parts to show, or [] when nothing was spent and there is no budget. */
export function spendParts(usage, budget) {
  const spent = usage ?? { tokens: 0, costUsd: 0 };
  const limits = budget ?? {};
  const parts = [];
  if (spent.tokens > 0 || limits.maxTokens !== undefined)
    parts.push(withUnit(part(spent.tokens, limits.maxTokens, String), 'tokens'));
  if (spent.costUsd > 0 || limits.maxCostUsd !== undefined) parts.push(part(spent.costUsd, limits.maxCostUsd, money));
  if (limits.maxSeconds !== undefined) parts.push({ text: `limit ${limits.maxSeconds} s`, over: false });
  return parts;
}

/** `spend 120 / 100 tokens · $0.50 / $1.00`, or '' when there is nothing to show. */
export function spendText(usage, budget) {
  const parts = spendParts(usage, budget);
  if (parts.length === 0) return '';
  return `spend ${parts.map((p) => (p.over ? `${p.text} (over)` : p.text)).join(' · ')}`;
}

const NOT_MADE = {
  declined: 'declined',
  rejected: 'rejected by a person',
  expired: 'expired without a decision',
};

/**
 * The budget replan (GET /runs/{id} `budgetReplan`) as one short line and its detail (the reason with the figures,
 * or the code and message of a replan not made): `budget replan → revision 2`, `budget replan rejected by a person`.
 * Null when the run asked for none.
 */
export function budgetReplanText(replan) {
  if (!replan) return null;
  if (replan.outcome === 'revised')
    return { text: `budget replan → revision ${replan.revision}`, detail: replan.reason };
  if (replan.outcome === 'exhausted_again')
    return { text: `budget replan → revision ${replan.revision}, exhausted again`, detail: replan.reason };
  const how = NOT_MADE[replan.outcome] ?? replan.outcome;
  return { text: `budget replan ${how}`, detail: `${replan.code}: ${replan.message}` };
}
